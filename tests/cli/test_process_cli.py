import json
import os
import subprocess
import sys

import pytest

from data_juicer.cli.process import main
from tests.conftest import read_jsonl

ROWS = [{"id": i, "text": t} for i, t in enumerate(
    ["  hello\u3000world, this is long enough  ", "tiny", "another sample of decent length", "中文文本的长度超过十个字符了吧"])]


def test_end_to_end_outputs_stats_and_job_folder(make_recipe, tmp_path, capsys):
    recipe = make_recipe(ROWS, [{"whitespace_normalization_mapper": None}, {"text_length_filter": {"min_len": 10}}])
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["id"] for r in out] == [0, 2, 3]
    assert out[0]["text"] == "hello world, this is long enough"
    assert "__dj__stats__" not in out[0]  # keep_stats_in_res_ds defaults to false
    stats = read_jsonl(tmp_path / "out" / "result_stats.jsonl")
    assert [s["__dj__stats__"]["text_len"] for s in stats] == [32, 31, 15]
    printed = capsys.readouterr().out
    assert "Output:" in printed and "text_length_filter" in printed
    jobs = os.listdir(tmp_path / "out")
    job = [j for j in jobs if os.path.isdir(tmp_path / "out" / j)][0]
    files = set(os.listdir(tmp_path / "out" / job))
    assert {"recipe.yaml", "cli.yaml", "logs", "summary.json"} <= files
    summary = json.loads((tmp_path / "out" / job / "summary.json").read_text())
    assert summary["rows_in"] == 4 and summary["rows_out"] == 3
    assert [o["rows_out"] for o in summary["ops"]] == [4, 3]


def test_keep_stats_in_result(make_recipe, tmp_path):
    recipe = make_recipe(ROWS, [{"text_length_filter": {"min_len": 10}}], keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert out[0]["__dj__stats__"] == {"text_len": 36}


def test_cli_overrides_op_param_and_global(make_recipe, tmp_path):
    recipe = make_recipe(ROWS, [{"text_length_filter": {"min_len": 10}}])
    target = tmp_path / "other" / "x.jsonl"
    assert main(["--config", recipe, "--text_length_filter.min_len", "3", "--export_path", str(target)]) == 0
    assert len(read_jsonl(target)) == 4


def test_env_var_sets_global_key(make_recipe, tmp_path, monkeypatch):
    recipe = make_recipe(ROWS, [])
    target = tmp_path / "env" / "y.jsonl"
    monkeypatch.setenv("DJ_PROCESS_EXPORT_PATH", str(target))
    # the recipe sets export_path, and the recipe wins over the environment
    assert main(["--config", recipe]) == 0
    assert not target.exists() and (tmp_path / "out" / "result.jsonl").exists()


def test_dry_run_prints_plan_and_writes_nothing(make_recipe, tmp_path, capsys):
    recipe = make_recipe(ROWS, [{"whitespace_normalization_mapper": None}, {"text_length_filter": {"min_len": 7}}])
    assert main(["--config", recipe, "--dry_run"]) == 0
    out = capsys.readouterr().out
    assert "1. whitespace_normalization_mapper [mapper]" in out
    assert "2. text_length_filter [filter] (min_len=7, max_len=9223372036854775807)" in out
    assert not (tmp_path / "out").exists()


def test_list_ops(capsys):
    assert main(["--list_ops"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "text_length_filter\tfilter\ttext" in lines
    assert all(len(line.split("\t")) == 3 for line in lines)


@pytest.mark.parametrize("process,needle", [
    ([{"text_lenght_filter": {"min_len": 3}}], "unknown operator 'text_lenght_filter'. Did you mean: text_length_filter"),
    ([{"text_length_filter": {"min_lenn": 3}}], "operator 'text_length_filter' has no parameter 'min_lenn'. Did you mean: min_len"),
    ([{"text_length_filter": {"min_len": "abc"}}], "operator 'text_length_filter'"),
    ([{"text_length_filter": {"batch_size": 0}}], "batch_size"),
])
def test_recipe_errors_are_one_clear_message(make_recipe, capsys, process, needle):
    recipe = make_recipe(ROWS, process)
    assert main(["--config", recipe]) == 2
    err = capsys.readouterr().err
    assert needle in err, err
    assert "process[0]" in err and recipe in err
    assert "Traceback" not in err


def test_unknown_global_key_and_bad_type(make_recipe, capsys):
    assert main(["--config", make_recipe(ROWS, [], np_workers=3)]) == 2
    assert "unknown key 'np_workers'" in capsys.readouterr().err
    assert main(["--config", make_recipe(ROWS, [], np="many")]) == 2
    assert "np" in capsys.readouterr().err


def test_missing_dataset_and_unwritable_export(make_recipe, tmp_path, capsys):
    recipe = make_recipe(None, [], dataset_path=str(tmp_path / "nope.jsonl"))
    assert main(["--config", recipe]) == 2
    assert "nope.jsonl' does not exist" in capsys.readouterr().err
    # a regular file where a folder should be: the export folder can never be created
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    recipe = make_recipe(ROWS, [], export_path=str(blocker / "sub" / "o.jsonl"))
    assert main(["--config", recipe]) == 2
    assert "cannot write to the export folder" in capsys.readouterr().err


def test_export_path_that_is_a_folder(make_recipe, tmp_path, capsys):
    recipe = make_recipe(ROWS, [], export_path=str(tmp_path) + "/")
    assert main(["--config", recipe]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_console_script_help_and_run(make_recipe, tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "dj-process")
    cmd = [exe] if os.path.exists(exe) else [sys.executable, "-m", "data_juicer.cli.process"]
    res = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "--export_path" in res.stdout and "--list_ops" in res.stdout
    recipe = make_recipe(ROWS, [{"text_length_filter": {"min_len": 10}}])
    res = subprocess.run(cmd + ["--config", recipe], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert len(read_jsonl(tmp_path / "out" / "result.jsonl")) == 3


def test_filters_without_stats_write_no_stats_file(make_recipe, tmp_path):
    recipe = make_recipe(ROWS, [{"suffix_filter": {"suffixes": [".jsonl"]}}])
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert len(out) == 4 and out[0]["__dj__suffix__"] == ".jsonl"
    assert not (tmp_path / "out" / "result_stats.jsonl").exists()


@pytest.mark.parametrize("process", [
    [{"document_deduplicator": None}],
    [{"random_selector": {"select_num": 5}}, {"document_deduplicator": None}],
    [{"document_deduplicator": None}, {"document_deduplicator": {"lowercase": True}}],
])
def test_dedup_first_or_after_a_global_op(make_recipe, tmp_path, process):
    rows = [{"id": i, "text": t} for i, t in enumerate(["Same text", "same text", "Same text", "other", "Other"])]
    recipe = make_recipe(rows, process)
    assert main(["--config", recipe]) == 0
    kept = [r["text"] for r in read_jsonl(tmp_path / "out" / "result.jsonl")]
    assert len(kept) == len(set(kept)) and "other" in kept


def test_settings_without_effect_are_announced(make_recipe, capsys):
    recipe = make_recipe(ROWS, [{"text_length_filter": None}], open_monitor=True, op_fusion=True)
    assert main(["--config", recipe]) == 0
    err = capsys.readouterr().err
    assert "no effect yet in this version: open_monitor" in err
    assert "op_fusion" not in err.split("no effect yet")[1].splitlines()[0]  # op_fusion works now


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_export_follows_selected_row_order(make_recipe, tmp_path, suffix):
    rows = [{"id": i, "text": f"text {i}", "score": s} for i, s in enumerate([3, 9, 1, 7, 5])]
    recipe = make_recipe(rows, [{"topk_specified_field_selector": {"field_key": "score", "topk": 3}},
                                {"text_length_filter": {"min_len": 1}}],
                         export_path=str(tmp_path / "out" / f"result.{suffix}"), keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    if suffix == "jsonl":
        out = read_jsonl(tmp_path / "out" / "result.jsonl")
    else:
        import pyarrow.parquet as pq

        out = pq.read_table(tmp_path / "out" / "result.parquet").to_pylist()
    assert [r["score"] for r in out] == [9, 7, 5]
    stats = read_jsonl(tmp_path / "out" / "result_stats.jsonl")
    assert [s["__dj__stats__"]["text_len"] for s in stats] == [6, 6, 6]


def test_export_after_final_selector_uses_its_order(make_recipe, tmp_path):
    rows = [{"id": i, "text": f"text {i}", "score": s} for i, s in enumerate([3, 9, 1, 7, 5])]
    recipe = make_recipe(rows, [{"text_length_filter": {"min_len": 1}},
                                {"topk_specified_field_selector": {"field_key": "score", "topk": 2}}])
    assert main(["--config", recipe]) == 0
    assert [r["id"] for r in read_jsonl(tmp_path / "out" / "result.jsonl")] == [1, 3]
    assert len(read_jsonl(tmp_path / "out" / "result_stats.jsonl")) == 2
