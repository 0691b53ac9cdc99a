"""open_tracer: examples of what each mapper changed, filter removed and dedup matched."""
import os

import pytest

from data_juicer.cli.process import main
from tests.conftest import read_jsonl

TEXTS = ["mail me at a@b.com please", "no email here at all", "tiny", "x", "write to c@d.org now",
         "no email here at all", "another fine sentence"]


def _trace_dir(tmp_path):
    out = tmp_path / "out"
    job = [d for d in os.listdir(out) if (out / d).is_dir()][0]
    return out / job / "trace"


@pytest.mark.parametrize("np_", [1, 2])
def test_trace_files(make_recipe, tmp_path, np_, executor_type):
    if executor_type == "ray" and np_ == 2:
        pytest.skip("np does not apply to Ray (its CPUs do)")
    rows = [{"id": i, "text": t} for i, t in enumerate(TEXTS)] * (1 if np_ == 1 else 400)
    recipe = make_recipe(rows, [{"clean_email_mapper": None}, {"text_length_filter": {"min_len": 5}},
                                {"document_deduplicator": None}],
                         open_tracer=True, trace_num=2, trace_keys=["id"], np=np_, executor_type=executor_type)
    assert main(["--config", recipe]) == 0
    trace = _trace_dir(tmp_path)
    mapped = read_jsonl(trace / "sample_trace-clean_email_mapper.jsonl")
    assert mapped[0] == {"id": 0, "original_text": "mail me at a@b.com please", "processed_text": "mail me at  please"}
    assert len(mapped) == 2 and mapped[1]["processed_text"] == "write to  now"
    removed = read_jsonl(trace / "sample_trace-text_length_filter.jsonl")
    assert [r["text"] for r in removed] == ["tiny", "x"]
    assert removed[0]["__dj__stats__"] == {"text_len": 4} and "__dj__index__" not in removed[0]
    dups = read_jsonl(trace / "duplicate-document_deduplicator.jsonl")
    assert len(dups) >= 1 and dups[0]["dup1"]["text"] == dups[0]["dup2"]["text"]
    assert not (trace / ".parts").exists()


def test_op_list_to_trace_limits_ops(make_recipe, tmp_path):
    rows = [{"id": i, "text": t} for i, t in enumerate(TEXTS)]
    recipe = make_recipe(rows, [{"clean_email_mapper": None}, {"text_length_filter": {"min_len": 5}}],
                         open_tracer=True, op_list_to_trace=["text_length_filter"])
    assert main(["--config", recipe]) == 0
    assert sorted(os.listdir(_trace_dir(tmp_path))) == ["sample_trace-text_length_filter.jsonl"]
