"""lineage_stage: a fan-out stage in a recipe, end to end through dj-process."""
import os
import subprocess
import sys

import pytest

from data_juicer.cli.process import main
from data_juicer.core.dataset import DJDataset
from data_juicer.ops.registry import OPERATORS
from tests.conftest import read_jsonl

DOCS = [
    {"id": 0, "text": "one two three\n\nfour\n\n  five six  seven eight"},
    {"id": 1, "text": "a b"},
    {"id": 2, "text": "只有一个段落 没有 空行\n\n二 三 四 五"},
    {"id": 3, "text": ""},
    {"id": 4, "text": "alpha beta gamma\n\n\n\ndelta epsilon zeta eta 🙂"},
]
CHILD_OPS = [{"whitespace_normalization_mapper": None}, {"words_num_filter": {"min_num": 3}}]

FANOUT_OP = '''
from data_juicer.ops.pipeline._lineage_fanout import split_paragraphs
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("test_paragraph_fanout_mapper")
class ParagraphFanOut(Mapper):
    """One row per paragraph (a stand-in for any registered fan-out mapper)."""

    fan_out = True

    def process_batched(self, samples):
        out = {k: [] for k in samples}
        for i, text in enumerate(samples[self.text_key]):
            for piece in split_paragraphs(text, 0):
                for k in samples:
                    out[k].append(piece if k == self.text_key else samples[k][i])
        return out
'''


def stage(**params):
    return OPERATORS.get("lineage_stage")(**params)


def run(**params):
    return stage(**params).process(DJDataset.from_rows([dict(d) for d in DOCS])).hf.to_list()


def test_parents_get_their_surviving_children_in_order():
    out = run(child_ops=CHILD_OPS)
    assert [r["id"] for r in out] == [0, 2, 4]
    assert [r["children"] for r in out] == [["one two three", "five six  seven eight"],
                                            ["只有一个段落 没有 空行", "二 三 四 五"],
                                            ["alpha beta gamma", "delta epsilon zeta eta 🙂"]]
    assert out[0]["children_stats"] == [{"num_words": 3}, {"num_words": 4}]
    assert out[0]["text"] == DOCS[0]["text"]


def test_drop_policies_and_child_fields():
    assert [r["id"] for r in run(child_ops=CHILD_OPS, drop_parents="never")] == [0, 1, 2, 3, 4]
    never = run(child_ops=CHILD_OPS, drop_parents="never", children_key="kids", child_stats_key=None)
    assert never[1]["kids"] == [] and never[3]["kids"] == [] and "children_stats" not in never[0]
    # nothing failed: all_failed keeps parents whose children were only filtered out
    assert [r["id"] for r in run(child_ops=CHILD_OPS, drop_parents="all_failed")] == [0, 1, 2, 3, 4]
    out = run(expand="lines", child_fields=["id", "text"])
    assert out[0]["children"] == [{"id": 0, "text": "one two three"}, {"id": 0, "text": "four"},
                                  {"id": 0, "text": "  five six  seven eight"}]


def test_chunks_and_children_output():
    out = run(expand="chunks", chunk_size=4, output="children")
    assert [r["text"] for r in out if r["id"] == 1] == ["a b"]
    assert "".join(r["text"] for r in out if r["id"] == 0) == DOCS[0]["text"]


def test_failing_children_go_to_the_ledger_and_all_failed_parents_drop(tmp_path):
    op = stage(child_ops=[{"python_lambda_mapper": {"lambda_str": "lambda s: {**s, 'text': s['text'][5]}"}}],
               drop_parents="all_failed", work_dir=str(tmp_path))
    out = op.process(DJDataset.from_rows([dict(d) for d in DOCS])).hf.to_list()
    # children of 5 characters or fewer fail; id 1 ("a b") has only failed children; id 3 has none
    assert [(r["id"], r["children"]) for r in out] == [(0, ["w", "e"]), (2, ["落", " "]), (3, []), (4, [" ", " "])]
    ledger = read_jsonl(tmp_path / "errors.jsonl")
    assert [(e["sample"]["id"], e["child"], e["op"], e["error_type"], e["message"]) for e in ledger] == [
        (0, 1, "python_lambda_mapper", "IndexError", "string index out of range"),
        (1, 0, "python_lambda_mapper", "IndexError", "string index out of range")]


def test_skip_op_error_false_aborts_on_the_first_failing_batch():
    from data_juicer.core.runner import OpError

    op = stage(child_ops=[{"python_lambda_mapper": {"lambda_str": "lambda s: {**s, 'text': s['text'][5]}"}}],
               skip_op_error=False)
    with pytest.raises(OpError, match="operator 'lineage_stage/python_lambda_mapper' failed on child 1 of sample 0: "
                                      "IndexError: string index out of range"):
        op.process(DJDataset.from_rows([dict(d) for d in DOCS]))


def test_clear_errors_for_bad_stage_params():
    with pytest.raises(ValueError, match="'document_deduplicator' is a deduplicator; per-child ops are mappers"):
        stage(child_ops=[{"document_deduplicator": {}}])
    with pytest.raises(ValueError, match="operator 'words_num_filter' has no parameter 'min_words'"):
        stage(child_ops=[{"words_num_filter": {"min_words": 3}}])
    with pytest.raises(ValueError, match="expand must be one of paragraphs, lines, chunks or"):
        stage(expand="sentences")
    with pytest.raises(ValueError, match="unknown operator 'word_num_filter'"):
        stage(child_ops=["word_num_filter"])


def write_recipe(tmp_path, name, process, extra=""):
    data = tmp_path / "docs.jsonl"
    if not data.exists():
        import json

        data.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DOCS), encoding="utf-8")
    (tmp_path / "fanout.py").write_text(FANOUT_OP)
    import yaml

    cfg = {"project_name": name, "dataset_path": str(data), "np": 1, "export_path": str(tmp_path / name / "out.jsonl"),
           "custom_operator_paths": [str(tmp_path / "fanout.py")], "process": process}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True) + extra, encoding="utf-8")
    return str(path)


def test_recipe_matches_the_flat_equivalent(tmp_path):
    flat = write_recipe(tmp_path, "flat", [{"test_paragraph_fanout_mapper": None}] + CHILD_OPS)
    assert main(["--config", flat]) == 0
    lineage = write_recipe(tmp_path, "lineage", [{"lineage_stage": {
        "expand": {"test_paragraph_fanout_mapper": None}, "child_ops": CHILD_OPS, "output": "children"}}])
    assert main(["--config", lineage]) == 0
    flat_rows = read_jsonl(tmp_path / "flat" / "out.jsonl")
    assert flat_rows == read_jsonl(tmp_path / "lineage" / "out.jsonl")
    assert read_jsonl(tmp_path / "flat" / "out_stats.jsonl") == read_jsonl(tmp_path / "lineage" / "out_stats.jsonl")
    # reduced to the parents: each parent's children are the flat rows of that parent, in order
    parents = write_recipe(tmp_path, "parents", [{"lineage_stage": {"child_ops": CHILD_OPS}}])
    assert main(["--config", parents]) == 0
    got = {r["id"]: r["children"] for r in read_jsonl(tmp_path / "parents" / "out.jsonl")}
    want: dict = {}
    for r in flat_rows:
        want.setdefault(r["id"], []).append(r["text"])
    assert got == want


RECIPE = """
project_name: lineage-demo
dataset_path: {data}
export_path: {out}
np: 1
process:
  - lineage_stage:
      expand: paragraphs            # each document becomes its paragraphs
      child_ops:                    # run on every paragraph, batched across documents
        - whitespace_normalization_mapper:
        - words_num_filter: {{min_num: 3}}
      children_key: paragraphs      # the kept paragraphs, in order
      child_stats_key: paragraph_stats
      drop_parents: no_survivors    # a document without a kept paragraph is dropped
"""


@pytest.mark.slow  # a fresh dj-process process: ~6 s on a shared 2-core machine
def test_dj_process_cli_runs_a_lineage_recipe(tmp_path):
    import json

    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DOCS), encoding="utf-8")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(RECIPE.format(data=data, out=tmp_path / "o" / "res.jsonl"), encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "data_juicer.cli.process", "--config", str(recipe)],
                         capture_output=True, text=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert res.returncode == 0, res.stderr
    out = read_jsonl(tmp_path / "o" / "res.jsonl")
    assert [(r["id"], r["paragraphs"]) for r in out] == [
        (0, ["one two three", "five six  seven eight"]), (2, ["只有一个段落 没有 空行", "二 三 四 五"]),
        (4, ["alpha beta gamma", "delta epsilon zeta eta 🙂"])]
    assert out[0]["paragraph_stats"] == [{"num_words": 3}, {"num_words": 4}]
    assert "[lineage_stage] 5 samples -> 8 children (6 kept, 0 failed) -> 3 rows" in res.stderr


@pytest.mark.skipif("text_chunk_mapper" not in OPERATORS, reason="text_chunk_mapper is not in this checkout")
def test_text_chunk_mapper_as_expander_matches_flat(tmp_path):
    chunker = {"text_chunk_mapper": {"max_len": 8, "split_pattern": None}}
    flat = write_recipe(tmp_path, "flat", [chunker] + CHILD_OPS[1:])
    assert main(["--config", flat]) == 0
    lineage = write_recipe(tmp_path, "lineage", [{"lineage_stage": {
        "expand": chunker, "child_ops": CHILD_OPS[1:], "output": "children"}}])
    assert main(["--config", lineage]) == 0
    flat_rows = read_jsonl(tmp_path / "flat" / "out.jsonl")
    assert flat_rows and flat_rows == read_jsonl(tmp_path / "lineage" / "out.jsonl")
