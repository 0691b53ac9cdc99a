"""Per-sample failures: isolated, recorded in the ledger, or stopping the run when asked."""
import json
import os
import textwrap

import pytest

from data_juicer.cli.process import main
from tests.conftest import read_jsonl

CUSTOM_OP = textwrap.dedent('''
    from data_juicer.ops.base import Mapper
    from data_juicer.ops.registry import OPERATORS


    @OPERATORS.register_module("explode_on_marker_mapper")
    class ExplodeOnMarkerMapper(Mapper):
        """Upper-cases the text; raises on texts containing 'BOOM'."""

        def __init__(self, marker: str = "BOOM", **kwargs):
            super().__init__(**kwargs)
            self.marker = marker

        def process_batched(self, samples):
            out = []
            for t in samples[self.text_key]:
                if self.marker in t:
                    raise ValueError(f"cannot handle {t!r}")
                out.append(t.upper())
            samples[self.text_key] = out
            return samples
''')

ROWS = [{"id": f"s{i}", "text": t} for i, t in enumerate(
    ["first fine text", "this one goes BOOM here", "third fine text", "fourth fine", "BOOM again"])]


def _job_dir(tmp_path):
    out = tmp_path / "out"
    return out / [d for d in os.listdir(out) if (out / d).is_dir()][0]


def test_failing_samples_go_to_ledger_alone(make_recipe, tmp_path, capsys, executor_type):
    op_file = tmp_path / "my_ops.py"
    op_file.write_text(CUSTOM_OP)
    recipe = make_recipe(ROWS, [{"explode_on_marker_mapper": None}, {"text_length_filter": {"min_len": 12}}],
                         custom_operator_paths=[str(op_file)], executor_type=executor_type)
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    # the batch held all five samples: only the two failing ones left it
    assert [r["id"] for r in out] == ["s0", "s2"]
    assert out[0]["text"] == "FIRST FINE TEXT"
    ledger = read_jsonl(_job_dir(tmp_path) / "errors.jsonl")
    assert sorted(e["id"]["id"] for e in ledger) == ["s1", "s4"]
    e = [x for x in ledger if x["id"]["id"] == "s1"][0]
    assert e["op"] == "explode_on_marker_mapper" and e["error_type"] == "ValueError"
    assert "cannot handle" in e["message"] and e["index"] == 1
    assert e["sample"]["text"] == "this one goes BOOM here"  # the sample as the op received it
    summary = json.loads((_job_dir(tmp_path) / "summary.json").read_text())
    assert summary["errors_by_op"] == {"explode_on_marker_mapper": 2}
    assert "Errors: 2 samples" in capsys.readouterr().out


def test_skip_op_error_false_stops_naming_op_and_sample(make_recipe, tmp_path, capsys, executor_type):
    op_file = tmp_path / "my_ops.py"
    op_file.write_text(CUSTOM_OP)
    recipe = make_recipe(ROWS, [{"explode_on_marker_mapper": None}], custom_operator_paths=[str(op_file)],
                         skip_op_error=False, executor_type=executor_type)
    assert main(["--config", recipe]) == 1
    err = capsys.readouterr().err
    assert "operator 'explode_on_marker_mapper' failed on sample id='s1'" in err
    assert not (tmp_path / "out" / "result.jsonl").exists()


def test_custom_op_param_validation(make_recipe, tmp_path, capsys):
    op_file = tmp_path / "my_ops.py"
    op_file.write_text(CUSTOM_OP)
    recipe = make_recipe(ROWS, [{"explode_on_marker_mapper": {"markr": "x"}}], custom_operator_paths=[str(op_file)])
    assert main(["--config", recipe]) == 2
    assert "has no parameter 'markr'. Did you mean: marker" in capsys.readouterr().err


def test_a_later_batch_failing_on_every_row_keeps_the_schema():
    """A batch whose rows all fail (an LLM server that died) still carries the columns of the
    batches before it, so the Arrow writer accepts it and its rows reach the ledger."""
    import datasets

    from data_juicer.core.runner import FusedRun
    from data_juicer.ops.filter.text_length_filter import TextLengthFilter

    class Bad(TextLengthFilter):
        def compute_stats_batched(self, samples, *a, **k):
            if any("bad" in t for t in samples["text"]):
                raise ValueError("boom")
            return super().compute_stats_batched(samples, *a, **k)

    op = Bad(min_len=0)
    op.skip_op_error = True
    ds = datasets.Dataset.from_list([{"text": t} for t in ["a", "bb", "bad1", "bad2", "ccc", "d"]])
    rows = ds.map(FusedRun([op]), batched=True, batch_size=2).to_list()
    assert [r["__dj__stats__"] for r in rows] == [{"text_len": 1}, {"text_len": 2}, None, None,
                                                   {"text_len": 3}, {"text_len": 1}]
    assert [bool(r["__dj__error__"]) for r in rows] == [False, False, True, True, False, False]


@pytest.mark.parametrize("np_", [1, 2])
def test_first_batches_failing_on_every_row_go_to_the_ledger(tmp_path, np_):
    """A worker whose first batches fail wholly (an LLM server down when the run starts, then
    back) cannot return those rows in the dataset before it knows the stats column: they are
    spilled and ledgered; no row is lost and the result has the stats of the good rows."""
    import json

    from data_juicer.cli.process import main

    mod = tmp_path / "flaky.py"
    mod.write_text(
        "def process(sample):\n"
        "    if sample['text'].startswith('bad'):\n"
        "        raise ValueError('server down')\n"
        "    return sample\n")
    data = tmp_path / "in.jsonl"
    texts = ["bad0", "bad1", "bad2", "bad3", "aa", "bbb", "cccc", "dd"]
    data.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        f"dataset_path: {data}\nexport_path: {tmp_path / 'out' / 'res.jsonl'}\nnp: {np_}\n"
        "process:\n"
        f"  - python_file_mapper:\n      file_path: {mod}\n      function_name: process\n      batch_size: 2\n"
        "  - text_length_filter:\n      min_len: 0\n      batch_size: 2\n")
    assert main(["--config", str(recipe)]) == 0
    out = [json.loads(line) for line in (tmp_path / "out" / "res.jsonl").read_text().splitlines()]
    assert [r["id"] for r in out] == [4, 5, 6, 7]
    stats = [json.loads(line) for line in (tmp_path / "out" / "res_stats.jsonl").read_text().splitlines()]
    assert [s["__dj__stats__"]["text_len"] for s in stats] == [2, 3, 4, 2]
    ledger = list((tmp_path / "out").rglob("errors.jsonl"))
    entries = [json.loads(line) for line in ledger[0].read_text().splitlines()]
    assert sorted(e["sample"]["id"] for e in entries) == [0, 1, 2, 3]
    assert {e["op"] for e in entries} == {"python_file_mapper"}
