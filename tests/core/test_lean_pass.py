"""Row-wise passes without ``datasets`` (``core/backends/lean_pass.py``): a recipe of mappers and filters
over JSONL gives the same export, stats and error ledger, byte for byte, as the ``datasets`` path
(``DJ_LEAN=0``); what the lean writer cannot type as ``datasets`` does, it declines, and the pass runs
on the ``datasets`` path instead."""
import json
import os
import textwrap

import numpy as np
import pyarrow as pa
import pytest
import yaml

from data_juicer.cli.process import main
from data_juicer.core import loader as loader_mod
from data_juicer.core.backends import lean_pass
from data_juicer.core.backends.lean_pass import Decline, write_rows
from tests.core.test_lean_path import modules_after_run

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
         "upsilon phi chi psi omega naïve 日本語 Ünïcödé").split()


def _rows(n=60):
    rows = []
    for i in range(n):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(5 + i % 23)]
        text = " ".join(words)
        if i % 5 == 0:
            text += " see https://example.com/page" + str(i)
        if i % 9 == 0:
            text = "  " + text.replace(" ", "   ") + "  "
        rows.append({"id": i, "text": text,
                     "meta": {"source": ["web", "book", "code"][i % 3], "tags": [f"t{i}", None], "n": i}})
    return rows


PROCESS = [{"clean_links_mapper": None}, {"whitespace_normalization_mapper": None},
           {"specified_field_filter": {"field_key": "meta.source", "target_value": ["web", "book"]}},
           {"words_num_filter": {"min_num": 8}}, {"text_length_filter": {"min_len": 40}}]

# the custom ops: one raises on a marker (skip_op_error puts the row in the ledger), one writes a new
# column of dicts whose keys differ (``datasets`` may store those as JSON), which the lean writer declines
CUSTOM_OPS = textwrap.dedent('''
    from data_juicer.ops.base import Mapper
    from data_juicer.ops.registry import OPERATORS


    @OPERATORS.register_module("lean_test_boom_mapper")
    class LeanTestBoomMapper(Mapper):
        def process_batched(self, samples):
            for t in samples[self.text_key]:
                if "example.com/page1" in t:
                    raise ValueError("boom on " + t[:20])
            return samples


    @OPERATORS.register_module("lean_test_ragged_mapper")
    class LeanTestRaggedMapper(Mapper):
        def process_batched(self, samples):
            samples["extra"] = [{"a": 1} if i % 2 else {"b": "x"} for i in range(len(samples[self.text_key]))]
            return samples
''')


def _write(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def _run(tmp_path, name, data, lean, monkeypatch, process=PROCESS, **extra):
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    recipe = {"project_name": name, "dataset_path": str(data), "np": 2, "use_cache": False,
              "export_path": str(folder / "out.jsonl"), "work_dir": str(folder), "process": process, **extra}
    path = folder / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    monkeypatch.setenv("DJ_LEAN", "1" if lean else "0")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / f"hf-{name}"))
    rc = main(["--config", str(path)])
    loader_mod._join_prefetch()
    return rc, folder


def _outputs(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix == ".jsonl"}


def _ledger(folder):
    out = []
    for root, _, files in os.walk(folder):
        if "errors.jsonl" in files:
            with open(os.path.join(root, "errors.jsonl"), encoding="utf-8") as f:
                out += [json.loads(line) for line in f]
    return sorted(out, key=lambda e: json.dumps(e, sort_keys=True))


def _both(tmp_path, data, monkeypatch, **extra):
    rc_full, full = _run(tmp_path, "full", data, False, monkeypatch, **extra)
    rc_lean, lean = _run(tmp_path, "lean", data, True, monkeypatch, **extra)
    assert rc_full == rc_lean == 0
    got, want = _outputs(lean), _outputs(full)
    assert sorted(got) == sorted(want) == ["out.jsonl", "out_stats.jsonl"]
    assert got == want
    return [json.loads(line) for line in got["out.jsonl"].decode("utf-8").splitlines()], full, lean


@pytest.fixture(params=["small", "streamed"])
def size(request, monkeypatch):
    if request.param == "streamed":  # the memory-mapped Arrow file of a large JSONL, in small blocks
        monkeypatch.setattr(loader_mod, "SMALL_BYTES", 0)
        monkeypatch.setattr(loader_mod, "STREAM_BLOCK_BYTES", 4096)
    yield request.param
    loader_mod._join_prefetch()


@pytest.mark.parametrize("np_", [1, 2])
def test_mappers_and_filters_same_export(tmp_path, monkeypatch, size, np_):
    data = _write(tmp_path / "in.jsonl", _rows())
    out, _, _ = _both(tmp_path, data, monkeypatch, np=np_)
    assert [r["id"] for r in out] == [4, 6, 7, 9, 10, 12, 13, 15, 16, 18, 19, 21, 22, 27, 28, 30, 31, 33, 34, 36,
                                      37, 39, 40, 42, 43, 45, 49, 51, 52, 54, 55, 57, 58]
    assert out[0]["meta"] == {"source": "book", "tags": ["t4", None], "n": 4}
    assert "https://" not in out[4]["text"]  # row 10's link is gone


def test_small_batches_across_workers_same_export(tmp_path, monkeypatch):
    # many chunks, each of several batches: the stats struct typed in the first batch of each chunk
    data = _write(tmp_path / "in.jsonl", _rows(200))
    process = [dict(d) for d in PROCESS]
    process[3] = {"words_num_filter": {"min_num": 8, "batch_size": 7}}
    out, _, _ = _both(tmp_path, data, monkeypatch, process=process)
    assert len(out) == 114


def test_failed_rows_same_ledger(tmp_path, monkeypatch):
    ops = tmp_path / "ops.py"
    ops.write_text(CUSTOM_OPS)
    data = _write(tmp_path / "in.jsonl", _rows())
    process = [{"lean_test_boom_mapper": None}] + PROCESS
    out, full, lean = _both(tmp_path, data, monkeypatch, process=process, custom_operator_paths=[str(ops)])
    ledger = _ledger(lean)
    assert ledger == _ledger(full)
    assert sorted(e["sample"]["id"] for e in ledger) == [10, 15]  # the two rows it raises on (both kept otherwise)
    assert {e["op"] for e in ledger} == {"lean_test_boom_mapper"}
    assert len(out) == 31 and 10 not in [r["id"] for r in out]


def test_declined_pass_runs_on_datasets_path(tmp_path, monkeypatch, capsys):
    ops = tmp_path / "ops.py"
    ops.write_text(CUSTOM_OPS)
    data = _write(tmp_path / "in.jsonl", _rows(30))
    out, _, _ = _both(tmp_path, data, monkeypatch, process=[{"lean_test_ragged_mapper": None}] + PROCESS,
                      custom_operator_paths=[str(ops)])
    err = capsys.readouterr().err
    assert "runs on the datasets path (column 'extra': dicts with different keys" in err
    # what the datasets path made of the ragged dicts (one process: ``map``'s writer merged their keys)
    assert [r["id"] for r in out] == [4, 6, 7, 9, 10, 12, 13, 15, 16, 18, 19, 21, 22, 27, 28]
    assert out[0]["extra"] == {"b": "x", "a": None} and out[2]["extra"] == {"b": None, "a": 1}


def test_cache_rerun_loads_the_pass(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(loader_mod, "SMALL_BYTES", 0)  # read from a file: a pass can be cached
    data = _write(tmp_path / "in.jsonl", _rows())
    cache = tmp_path / "cache"
    rc, first = _run(tmp_path, "a", data, True, monkeypatch, use_cache=True, ds_cache_dir=str(cache))
    assert rc == 0
    files = sorted(p.name for p in cache.rglob("cache-*_lean*"))
    assert len(files) == 2 and files[0].endswith("_lean.json") and files[1].endswith("_lean_00000_of_00001.arrow")
    capsys.readouterr()
    rc, second = _run(tmp_path, "b", data, True, monkeypatch, use_cache=True, ds_cache_dir=str(cache))
    assert rc == 0
    assert "loaded from the cache" in capsys.readouterr().err
    assert _outputs(first) == _outputs(second)
    assert len(_outputs(second)["out.jsonl"].splitlines()) == 33


def test_row_wise_recipe_imports_no_datasets(tmp_path):
    """In a fresh process: the run imports neither ``datasets`` nor ``huggingface_hub``."""
    data = _write(tmp_path / "in.jsonl", _rows())
    recipe = {"dataset_path": str(data), "np": 2, "export_path": str(tmp_path / "o.jsonl"),
              "work_dir": str(tmp_path), "process": PROCESS}
    assert "MODS [] 0" in modules_after_run(tmp_path, recipe, ("datasets", "huggingface_hub"))
    assert len((tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()) == 33


# -- the writer ------------------------------------------------------------------------------------------
def _read(path):
    return pa.ipc.open_stream(pa.memory_map(str(path))).read_all()


def test_writer_types_as_datasets(tmp_path):
    schema = pa.schema([("text", pa.string()), ("meta", pa.struct([("a", pa.int64()), ("b", pa.string())]))])
    batches = [
        # the input's struct comes back with its keys in another order; a stat is None all through the batch
        {"text": ["x", "y"], "meta": [{"b": "p", "a": 1}, {"b": None, "a": 2}], "s": [{"v": None}, {"v": None}]},
        {"text": [], "meta": [], "s": []},  # empty: skipped
        {"text": ["z"], "meta": [{"b": "q", "a": 3}], "s": [{"v": None}]},
    ]
    assert write_rows(iter(batches), schema, str(tmp_path / "c.arrow")) == 3
    t = _read(tmp_path / "c.arrow")
    assert t.schema.field("meta").type == schema.field("meta").type
    assert str(t.schema.field("s").type) == "struct<v: null>"
    assert t.column("meta").to_pylist()[0] == {"a": 1, "b": "p"}
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]


def test_writer_casts_later_batches_to_the_first(tmp_path):
    batches = [{"text": ["a"], "s": [{"v": 1.5}]}, {"text": ["b"], "s": [{"v": None}]}]
    write_rows(iter(batches), pa.schema([("text", pa.string())]), str(tmp_path / "c.arrow"))
    t = _read(tmp_path / "c.arrow")
    assert str(t.schema.field("s").type) == "struct<v: double>"
    assert t.column("s").to_pylist() == [{"v": 1.5}, {"v": None}]


def test_writer_empty_chunk_has_input_schema(tmp_path):
    schema = pa.schema([("text", pa.string()), ("id", pa.int64())])
    assert write_rows(iter([{"text": [], "id": []}]), schema, str(tmp_path / "c.arrow")) == 0
    t = _read(tmp_path / "c.arrow")
    assert t.num_rows == 0 and t.schema.equals(schema)


@pytest.mark.parametrize("batch, why", [
    ({"text": ["a", "b"], "s": [{"a": 1}, {"b": 2}]}, "dicts with different keys"),
    ({"text": ["a"], "s": [{}]}, "an empty dict"),
    ({"text": ["a", "b"], "s": [[1], 2]}, "lists mixed with other values"),
    ({"text": ["a"], "s": [np.float32(1.5)]}, "a float32 value"),
    ({"text": ["a"], "input_ids": [[1, 2]]}, "tokenizer column"),
    ({"text": [1]}, "int64 where the file has string"),
])
def test_writer_declines_what_datasets_types_otherwise(tmp_path, batch, why):
    with pytest.raises(Decline, match=why):
        write_rows(iter([batch]), pa.schema([("text", pa.string())]), str(tmp_path / "c.arrow"))
    assert os.listdir(tmp_path) == []


def test_writer_declines_values_in_a_null_column(tmp_path):
    # datasets fixes a column's type at the first batch and refuses values in a null one later
    batches = [{"text": ["a"], "s": [None]}, {"text": ["b"], "s": [2.5]}]
    with pytest.raises(Decline, match="double where the file has null"):
        write_rows(iter(batches), pa.schema([("text", pa.string())]), str(tmp_path / "c.arrow"))


def test_assemble_aligns_a_null_column_only(tmp_path):
    a, b = str(tmp_path / "a.arrow"), str(tmp_path / "b.arrow")
    write_rows(iter([{"text": ["x"], "s": [None]}]), pa.schema([("text", pa.string())]), a)
    write_rows(iter([{"text": ["y"], "s": [1.5]}]), pa.schema([("text", pa.string())]), b)
    rows = lean_pass.assemble([a, b], None, None)
    assert rows.table.schema.field("s").type == pa.float64()
    assert rows.table.column("s").to_pylist() == [None, 1.5]
    c = str(tmp_path / "c.arrow")
    write_rows(iter([{"text": ["z"], "s": ["str"]}]), pa.schema([("text", pa.string())]), c)
    with pytest.raises(Decline, match="chunks type 's' differently"):
        lean_pass.assemble([b, c], None, None)


def test_passes_around_a_dedup_same_export_and_cached(tmp_path, monkeypatch, capsys):
    # a row pass, MinHash (a dataset-level step on the lean path), another row pass: lean == datasets, and a
    # rerun with the cache maps both passes from their files
    monkeypatch.setattr(loader_mod, "SMALL_BYTES", 0)
    rows = _rows()
    rows += [dict(rows[i], id=100 + i) for i in (4, 6, 7)]  # exact copies, dropped by the dedup
    data = _write(tmp_path / "in.jsonl", rows)
    process = [{"clean_links_mapper": None}, {"words_num_filter": {"min_num": 8}},
               {"document_minhash_deduplicator": {"tokenization": "space", "window_size": 3,
                                                  "num_permutations": 64, "jaccard_threshold": 0.9}},
               {"whitespace_normalization_mapper": None}, {"text_length_filter": {"min_len": 40}}]
    cache = tmp_path / "cache"
    out, _, lean = _both(tmp_path, data, monkeypatch, process=process, use_cache=True, ds_cache_dir=str(cache))
    ids = [r["id"] for r in out]
    # the copies of 4, 6 and 7 are gone (and the many near copies a 26-word vocabulary makes)
    assert ids == [4, 5, 6, 7, 8, 15, 20, 26, 27, 28, 40, 49, 50, 51]
    markers = sorted(p.name for p in cache.rglob("cache-*_lean.json"))
    assert len(markers) == 2  # the two row passes of the lean run
    capsys.readouterr()
    rc, again = _run(tmp_path, "again", data, True, monkeypatch, process=process, use_cache=True,
                     ds_cache_dir=str(cache))
    assert rc == 0
    assert capsys.readouterr().err.count("loaded from the cache") == 2
    assert _outputs(again) == _outputs(lean)


def test_writer_struct_fields_as_datasets_casts_them(tmp_path):
    # the input's stats gain a field: datasets cannot cast that to the input's struct and keeps the new
    # type; a later batch lacking a field gets it as null; a first batch lacking one takes the input's type
    schema = pa.schema([("text", pa.string()), ("s", pa.struct([("a", pa.int64()), ("b", pa.string())]))])
    batches = [{"text": ["x"], "s": [{"a": 1, "b": "p", "c": 2.5}]}, {"text": ["y"], "s": [{"c": 0.5, "a": 2}]}]
    write_rows(iter(batches), schema, str(tmp_path / "c.arrow"))
    t = _read(tmp_path / "c.arrow")
    assert str(t.schema.field("s").type) == "struct<a: int64, b: string, c: double>"
    assert t.column("s").to_pylist() == [{"a": 1, "b": "p", "c": 2.5}, {"a": 2, "b": None, "c": 0.5}]
    write_rows(iter([{"text": ["z"], "s": [{"b": "q"}]}]), schema, str(tmp_path / "d.arrow"))
    d = _read(tmp_path / "d.arrow")
    assert d.schema.field("s").type == schema.field("s").type
    assert d.column("s").to_pylist() == [{"a": None, "b": "q"}]



def _dup_rows():
    # 80 random 30-word documents of a 500-word vocabulary, then exact copies of three (ids 230, 231, 235)
    # and copies of three more with a word added (ids 360, 361, 365)
    from tests.core.test_lean_path import _docs

    rows = [{"id": i, "text": t, "meta": {"n": i}} for i, t in enumerate(_docs(80, seed=11))]
    rows += [dict(rows[i], id=200 + i) for i in (30, 31, 35)]
    rows += [dict(rows[i], id=300 + i, text=rows[i]["text"] + " w7") for i in (60, 61, 65)]
    return rows


EXACT_AND_SIMHASH = [{"document_deduplicator": {"lowercase": True, "batch_size": 16}},
                     {"document_simhash_deduplicator": {"tokenization": "space", "window_size": 2,
                                                        "hamming_distance": 4, "batch_size": 16}}]


def _both_exports(tmp_path, data, monkeypatch, process):
    rc_full, full = _run(tmp_path, "full", data, False, monkeypatch, process=process)
    rc_lean, lean = _run(tmp_path, "lean", data, True, monkeypatch, process=process)
    assert rc_full == rc_lean == 0
    assert _outputs(lean) == _outputs(full)
    return [json.loads(line)["id"] for line in (lean / "out.jsonl").read_text(encoding="utf-8").splitlines()]


def test_exact_and_simhash_dedups_same_export(tmp_path, monkeypatch, size):
    # a recipe of the two dedups is one hashing pass (forked workers, 16-row chunks) and two selections, all
    # on the lean path: the same export as the datasets path, without the copies
    ids = _both_exports(tmp_path, _write(tmp_path / "in.jsonl", _dup_rows()), monkeypatch, EXACT_AND_SIMHASH)
    assert ids == list(range(80))


def test_row_pass_with_merged_dedup_hashing_same_export(tmp_path, monkeypatch):
    # as in the 18-op recipe: the three dedups hash inside the row pass before them
    process = [{"clean_links_mapper": None}, {"words_num_filter": {"min_num": 6}}, *EXACT_AND_SIMHASH[:1],
               {"document_minhash_deduplicator": {"tokenization": "space", "window_size": 3,
                                                  "num_permutations": 64, "jaccard_threshold": 0.9}},
               *EXACT_AND_SIMHASH[1:]]
    rows = _dup_rows()
    rows[5]["text"] = "too short"  # dropped by the filter
    out, _, _ = _both(tmp_path, _write(tmp_path / "in.jsonl", rows), monkeypatch, process=process)
    assert [r["id"] for r in out] == [i for i in range(80) if i != 5]


def test_dedup_recipe_imports_no_datasets(tmp_path):
    data = _write(tmp_path / "in.jsonl", _dup_rows())
    recipe = {"dataset_path": str(data), "np": 2, "use_cache": False, "export_path": str(tmp_path / "o.jsonl"),
              "work_dir": str(tmp_path), "process": EXACT_AND_SIMHASH}
    out = modules_after_run(tmp_path, recipe, ("datasets", "huggingface_hub"))
    assert "MODS [] 0" in out
    assert len((tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()) == 80
