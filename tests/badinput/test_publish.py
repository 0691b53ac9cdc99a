"""The result, its stats file and the ledger are published together: no stale ``<stem>_stats.jsonl`` or
shard beside a new result, no temporary files left by a killed export after the next run, and a failed
export leaves the previous result as it was (both executors)."""
import os

import pytest

from tests.badinput.conftest import ledger, one_paragraph, read_rows, write_lines

ROWS = [f'{{"id": {i}, "text": "{"word " * (i + 1)}"}}' for i in range(6)]
FILTER = [{"text_length_filter": {"min_len": 12}}]  # drops ids 0 and 1 ("word word " is 10 chars)


def _files(folder):
    return sorted(n for n in os.listdir(folder) if not os.path.isdir(os.path.join(folder, n)))


def test_rerun_without_stats_removes_the_old_stats_file(make_recipe, tmp_path, dj, executor_type):
    data = write_lines(tmp_path / "data.jsonl", ROWS)
    out = tmp_path / "out"
    rc, _, _ = dj("--config", make_recipe(None, FILTER, dataset_path=data, executor_type=executor_type))
    assert rc == 0
    assert _files(out) == ["result.jsonl", "result_stats.jsonl"]
    assert len(read_rows(out / "result_stats.jsonl")) == len(read_rows(out / "result.jsonl")) == 4
    # the same export path, a recipe with no filter: the old stats would describe other rows
    rc, _, _ = dj("--config", make_recipe(None, [{"whitespace_normalization_mapper": {}}], dataset_path=data,
                                          executor_type=executor_type))
    assert rc == 0
    assert _files(out) == ["result.jsonl"]
    assert [r["id"] for r in read_rows(out / "result.jsonl")] == [0, 1, 2, 3, 4, 5]


def test_rerun_with_other_shards_removes_the_old_ones(make_recipe, tmp_path, dj, executor_type):
    data = write_lines(tmp_path / "data.jsonl", ROWS)
    out = tmp_path / "out"
    rc, _, _ = dj("--config", make_recipe(None, [], dataset_path=data, executor_type=executor_type,
                                          export_shard_size=60))
    assert rc == 0
    first = _files(out)
    assert len(first) > 2 and all(n.startswith("result-") and "-of-" in n for n in first), first
    rc, _, _ = dj("--config", make_recipe(None, [], dataset_path=data, executor_type=executor_type))
    assert rc == 0
    assert _files(out) == ["result.jsonl"]
    rc, _, _ = dj("--config", make_recipe(None, [], dataset_path=data, executor_type=executor_type,
                                          export_shard_size=100))
    assert rc == 0
    second = _files(out)
    assert "result.jsonl" not in second and second and all("-of-" in n for n in second), second
    assert sum(len(read_rows(out / n)) for n in second) == 6


def test_temporary_files_of_a_killed_export_are_cleaned(make_recipe, tmp_path, dj, executor_type):
    data = write_lines(tmp_path / "data.jsonl", ROWS)
    out = tmp_path / "out"
    out.mkdir()
    # what an export killed part-way leaves (the default executor's temporaries, Ray's part folder)
    left = [".result.jsonl.tmp-0badf00d", ".result_stats.jsonl.tmp-12345678", ".result-01-of-02.jsonl.tmp-abcdef01"]
    for n in left:
        (out / n).write_text('{"text": "half a fi')
    (out / ".result.jsonl.parts-deadbeef").mkdir()
    (out / ".result.jsonl.parts-deadbeef" / "00000000.jsonl").write_text("{}\n")
    (out / ".other.jsonl.tmp-0badf00d").write_text("not ours")  # another export's: left alone
    rc, _, _ = dj("--config", make_recipe(None, FILTER, dataset_path=data, executor_type=executor_type))
    assert rc == 0
    assert sorted(os.listdir(out)) == sorted([".other.jsonl.tmp-0badf00d", "result.jsonl", "result_stats.jsonl",
                                              os.path.basename(_job(out))])


def _job(out):
    return [os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))][0]


def test_failed_export_keeps_the_previous_result_and_leaves_no_temporaries(make_recipe, tmp_path, dj, monkeypatch):
    data = write_lines(tmp_path / "data.jsonl", ROWS)
    out = tmp_path / "out"
    recipe = make_recipe(None, FILTER, dataset_path=data)
    assert dj("--config", recipe)[0] == 0
    before = {n: (out / n).read_bytes() for n in _files(out)}

    import data_juicer.core.exporter as exporter

    real, calls = exporter._jsonl_tmp, []

    def disk_full_on_the_result(table, path, *a, **kw):  # the stats file is written, then the disk is full
        calls.append(path)
        if not path.endswith("_stats.jsonl"):
            raise OSError(28, "No space left on device", path)
        return real(table, path, *a, **kw)

    monkeypatch.setattr(exporter, "_jsonl_tmp", disk_full_on_the_result)
    rc, _, err = dj("--config", make_recipe(None, [{"text_length_filter": {"min_len": 30}}], dataset_path=data))
    assert rc == 1 and len(calls) == 2
    assert "No space left on device" in one_paragraph(err)
    assert {n: (out / n).read_bytes() for n in _files(out)} == before  # old result and old stats, in step


def test_ledger_is_in_the_job_folder_the_summary_names(make_recipe, tmp_path, dj, executor_type):
    import json

    data = write_lines(tmp_path / "data.jsonl", ROWS + ["[1]"])
    rc, _, _ = dj("--config", make_recipe(None, FILTER, dataset_path=data, executor_type=executor_type,
                                          load_jsonl_lenient=True))
    assert rc == 0
    out = tmp_path / "out"
    summary = json.loads((_job_path(out) / "summary.json").read_text())
    assert summary["export_files"] == [str(out / "result.jsonl")]
    assert summary["stats_file"] == str(out / "result_stats.jsonl")
    assert summary["errors"] == 1 and summary["rows_in"] == 6 and summary["rows_out"] == 4
    assert [e["line"] for e in ledger(out)] == [7]


def _job_path(out):
    from pathlib import Path

    return Path(_job(out))


@pytest.mark.parametrize("fmt", ["parquet"])
def test_parquet_rerun_without_stats(fmt, make_recipe, tmp_path, dj):
    data = write_lines(tmp_path / "data.jsonl", ROWS)
    export = str(tmp_path / "out" / f"result.{fmt}")
    assert dj("--config", make_recipe(None, FILTER, dataset_path=data, export_path=export))[0] == 0
    assert _files(tmp_path / "out") == ["result.parquet", "result_stats.jsonl"]
    assert dj("--config", make_recipe(None, [], dataset_path=data, export_path=export))[0] == 0
    assert _files(tmp_path / "out") == ["result.parquet"]
