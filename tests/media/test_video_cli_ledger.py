"""End to end through dj-process: the 4-op video recipe over good and bad videos.

A missing, corrupt or truncated video is one error-ledger entry naming its path; the run goes
on; every input row is either in the output or in the ledger; no file descriptor stays open."""

import os

import psutil
import pytest

from data_juicer.cli.process import main
from tests.conftest import read_jsonl
from tests.media.video_files import video_files  # noqa: F401

V = "<__dj__video>"


def _ledger(folder):
    out = []
    for root, _, names in os.walk(folder):
        if "errors.jsonl" in names:
            out += read_jsonl(os.path.join(root, "errors.jsonl"))
    return out


RECIPE = [
    {"video_duration_filter": {"max_duration": 10}},
    {"video_resolution_filter": {"min_width": 16}},
    {"video_motion_score_filter": {"min_score": -2}},
    {"video_split_by_duration_mapper": {"split_duration": 1.5, "keep_original_sample": False}},
]


@pytest.mark.parametrize("fusion", [False, True])
def test_bad_videos_go_to_the_ledger_and_rows_are_conserved(video_files, make_recipe, tmp_path, fusion):
    good = ["motion", "long", "audio", "vfr", "portrait"]
    bad = ["missing", "corrupt", "truncated"]
    rows = [{"id": i, "text": f"{V} clip {n}", "videos": [video_files[n]]} for i, n in enumerate(good + bad)]
    rows.append({"id": 99, "text": f"{V}{V} mixed", "videos": [video_files["motion"], video_files["corrupt"]]})
    recipe = make_recipe(rows, RECIPE, op_fusion=fusion, keep_stats_in_res_ds=True,
                         export_path=str(tmp_path / "out" / "result.jsonl"))
    proc = psutil.Process()
    before = proc.num_fds()
    assert main(["--config", recipe]) == 0
    assert proc.num_fds() <= before
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    ledger = _ledger(tmp_path)
    assert sorted(r["id"] for r in out) == [0, 1, 2, 3, 4]
    assert sorted(e["sample"]["id"] for e in ledger) == [5, 6, 7, 99]
    assert len(out) + len(ledger) == len(rows)
    by_id = {e["sample"]["id"]: e for e in ledger}
    assert "does_not_exist.mp4" in by_id[5]["message"] and by_id[5]["error_type"] == "FileNotFoundError"
    assert "corrupt.mp4" in by_id[6]["message"] and "truncated.mp4" in by_id[7]["message"]
    assert "corrupt.mp4" in by_id[99]["message"]
    assert {e["op"] for e in ledger} == {"video_duration_filter"} or fusion
    clips = {r["id"]: r["videos"] for r in out}
    assert [len(clips[i]) for i in range(5)] == [2, 4, 2, 2, 1]  # 2 s, 5 s, 2 s, 2.7 s, 1 s (not cut)
    assert all(os.path.exists(p) for c in clips.values() for p in c)
