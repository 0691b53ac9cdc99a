"""Consecutive deduplicators hashed in one pass (executor.plan_stages ``merge_hashing``, HF backend):
the same kept documents and the same export as one hashing pass per dedup, at np 1 and 2."""
import random

import pytest

from data_juicer.cli.process import main
from data_juicer.core.backends.hf import HFBackend
from data_juicer.core.executor import plan_stages
from data_juicer.ops.registry import OPERATORS
from tests.conftest import read_jsonl

DEDUPS = [
    {"document_deduplicator": {"lowercase": False, "ignore_non_character": False, "batch_size": 7}},
    {"document_minhash_deduplicator": {"tokenization": "space", "window_size": 5, "lowercase": True,
                                       "num_permutations": 128, "jaccard_threshold": 0.7, "batch_size": 7}},
    {"document_simhash_deduplicator": {"tokenization": "space", "window_size": 6, "lowercase": True,
                                       "num_blocks": 6, "hamming_distance": 4, "batch_size": 7}},
]
ROW_OPS = [{"whitespace_normalization_mapper": {"batch_size": 7}},
           {"text_length_filter": {"min_len": 20, "batch_size": 7}}]


def _corpus():
    """40 distinct documents, then exact copies of 0-4, copies of 5-9 with one word changed (near
    duplicates for MinHash), and 5 texts too short for the length filter."""
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(3000)]
    docs = [" ".join(rng.choice(vocab) for _ in range(60)) for _ in range(40)]
    rows = [{"id": f"o{i}", "text": t} for i, t in enumerate(docs)]
    rows += [{"id": f"x{i}", "text": docs[i]} for i in range(5)]
    for i in range(5, 10):
        words = docs[i].split(" ")
        words[58] = "CHANGED"  # 2 of its 56 shingles: Jaccard 54/58 with the original
        rows.append({"id": f"n{i}", "text": " ".join(words)})
    rows += [{"id": f"s{i}", "text": f"short {i}"} for i in range(5)]
    order = list(range(len(rows)))
    rng.shuffle(order)
    # the originals first, so that they are the kept ones; the rest shuffled in
    first = [r for r in rows if r["id"].startswith("o")]
    rest = [rows[i] for i in order if not rows[i]["id"].startswith("o")]
    return first[:20] + rest[:8] + first[20:] + rest[8:]


def _build(entries):
    return [OPERATORS.get(name)(**(params or {})) for e in entries for name, params in e.items()]


def test_plan_merges_consecutive_dedups():
    ops = _build(ROW_OPS + DEDUPS)
    stages = plan_stages(ops, merge_hashing=True)
    assert [(s.row_wise, [o.name for o in s.ops]) for s in stages] == [
        (True, ["whitespace_normalization_mapper", "text_length_filter", "document_deduplicator",
                "document_minhash_deduplicator", "document_simhash_deduplicator"]),
        (False, ["document_deduplicator"]), (False, ["document_minhash_deduplicator"]),
        (False, ["document_simhash_deduplicator"])]
    assert stages[0].recipe_ops == 2 and [d.name for d in stages[0].dedups] == [
        "document_deduplicator", "document_minhash_deduplicator", "document_simhash_deduplicator"]
    # without merging: one hashing pass before each dedup
    plain = plan_stages(ops)
    assert [(s.row_wise, len(s.ops)) for s in plain] == [(True, 3), (False, 1), (True, 1), (False, 1),
                                                          (True, 1), (False, 1)]
    assert [len(s.dedups) for s in plain if s.row_wise] == [1, 1, 1]


def test_plan_does_not_merge_after_a_dedup_that_changes_rows():
    # document_line_deduplicator rewrites the texts it keeps: the next dedup must hash its output
    ops = _build([{"document_line_deduplicator": {}}] + DEDUPS[1:])
    stages = plan_stages(ops, merge_hashing=True)
    assert [(s.row_wise, [o.name for o in s.ops]) for s in stages] == [
        (True, ["document_line_deduplicator"]), (False, ["document_line_deduplicator"]),
        (True, ["document_minhash_deduplicator", "document_simhash_deduplicator"]),
        (False, ["document_minhash_deduplicator"]), (False, ["document_simhash_deduplicator"])]


def _run(make_recipe, tmp_path, monkeypatch, merged: bool, np_: int, process, name: str, **cfg):
    monkeypatch.setattr(HFBackend, "merges_hashing", merged)
    export = tmp_path / name / "result.jsonl"
    recipe = make_recipe(_corpus(), process, np=np_, export_path=str(export),
                         ds_cache_dir=str(tmp_path / name / "cache"), **cfg)
    assert main(["--config", recipe]) == 0
    return export


EXPECTED_KEPT = {f"o{i}" for i in range(40)}


@pytest.mark.parametrize("np_", [1, 2])
@pytest.mark.parametrize("with_row_ops", [True, False], ids=["after-row-ops", "hash-only"])
def test_merged_hashing_keeps_the_same_documents(make_recipe, tmp_path, monkeypatch, np_, with_row_ops):
    process = (ROW_OPS if with_row_ops else []) + DEDUPS
    out = {}
    for merged in (True, False):
        out[merged] = _run(make_recipe, tmp_path, monkeypatch, merged, np_, process, f"m{int(merged)}")
    rows = read_jsonl(out[True])
    # exact copies and one-word edits go; the short texts go too: by the length filter, or (hash-only)
    # as MinHash's one cluster of texts shorter than a shingle, of which the first stays (as in
    # Data-Juicer); the originals stay in their input order
    first_short = next(r["id"] for r in _corpus() if r["id"].startswith("s"))
    want = EXPECTED_KEPT if with_row_ops else EXPECTED_KEPT | {first_short}
    assert {r["id"] for r in rows} == want
    assert [r["id"] for r in rows] == [r["id"] for r in _corpus() if r["id"] in want]
    assert out[True].read_bytes() == out[False].read_bytes()
    stats = [out[m].with_name("result_stats.jsonl") for m in (True, False)]
    assert stats[0].exists() == stats[1].exists()
    if stats[0].exists():
        assert stats[0].read_bytes() == stats[1].read_bytes()


def test_merged_hashing_with_hashes_kept(make_recipe, tmp_path, monkeypatch):
    """keep_hashes_in_res_ds: the same hash columns come out (MinHash drops its own, as before)."""
    out = {merged: _run(make_recipe, tmp_path, monkeypatch, merged, 2, ROW_OPS + DEDUPS, f"k{int(merged)}",
                        keep_hashes_in_res_ds=True) for merged in (True, False)}
    rows = read_jsonl(out[True])
    assert {r["id"] for r in rows} == EXPECTED_KEPT
    assert "__dj__simhash" in rows[0] and "__dj__hash" in rows[0] and "__dj__minhash" not in rows[0]
    assert out[True].read_bytes() == out[False].read_bytes()


def test_two_dedups_of_one_kind_are_not_merged(make_recipe, tmp_path, monkeypatch):
    """Two document_deduplicators with other parameters write the same hash column: the second one
    must hash with its own (lowercase) parameters, so it starts a pass of its own."""
    process = [{"document_deduplicator": {}}, {"document_deduplicator": {"lowercase": True}},
               {"document_minhash_deduplicator": {"num_permutations": 64}}]
    stages = plan_stages(_build(process), merge_hashing=True)
    assert [(s.row_wise, [o.name for o in s.ops]) for s in stages] == [
        (True, ["document_deduplicator"]), (False, ["document_deduplicator"]),
        (True, ["document_deduplicator", "document_minhash_deduplicator"]),
        (False, ["document_deduplicator"]), (False, ["document_minhash_deduplicator"])]
    rows = [{"id": str(i), "text": t} for i, t in enumerate(
        ["Same text here for this test", "same text here for this test", "Same text here for this test",
         "other words entirely in another one", "Other words entirely in another one"])]
    export = tmp_path / "out" / "result.jsonl"
    monkeypatch.setattr(HFBackend, "merges_hashing", True)
    recipe = make_recipe(rows, process, np=1, export_path=str(export), ds_cache_dir=str(tmp_path / "cache"))
    assert main(["--config", recipe]) == 0
    assert [r["id"] for r in read_jsonl(export)] == ["0", "3"]
