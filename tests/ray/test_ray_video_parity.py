"""Every video op gives the same output on the Ray executor as on the default one."""
import json
import os

import pytest

from tests.conftest import read_jsonl
from tests.media.video_files import video_files  # noqa: F401

V = "<__dj__video>"


def _ledger(folder):
    out = []
    for root, _, names in os.walk(folder):
        if "errors.jsonl" in names:
            out += [(e["sample"]["id"], e["op"]) for e in read_jsonl(os.path.join(root, "errors.jsonl"))]
    return sorted(out)


def _norm(rows):
    for r in rows:
        st = r.get("__dj__stats__")
        if isinstance(st, str):
            r["__dj__stats__"] = json.loads(st)
    return sorted(rows, key=lambda r: (r["id"], json.dumps(r.get("videos"))))


@pytest.mark.slow  # 8 s; video ops on Ray: this and tests/ray/test_ray_video_*.py in the slow target
def test_video_ops_same_on_ray(run_both, video_files, tmp_path):
    names = ["motion", "long", "vfr", "wide", "audio", "corrupt", "missing"]
    rows = [{"id": i, "text": f"{V} {n}", "videos": [video_files[n]]} for i, n in enumerate(names)]
    save = str(tmp_path / "produced")
    process = [
        {"video_duration_filter": {"max_duration": 10}},
        {"video_resolution_filter": {"min_width": 16}},
        {"video_aspect_ratio_filter": {"max_ratio": "5"}},
        {"video_motion_score_filter": {"min_score": -2}},
        {"video_resize_aspect_ratio_mapper": {"save_dir": save}},
        {"video_resize_resolution_mapper": {"max_width": 100, "save_dir": save}},
        {"video_ffmpeg_wrapped_mapper": {"filter_name": "hflip", "save_dir": save}},
        {"video_extract_frames_mapper": {"frame_sampling_method": "uniform", "frame_dir": save}},
        {"video_split_by_key_frame_mapper": {"save_dir": save, "keep_original_sample": False}},
        {"video_split_by_duration_mapper": {"split_duration": 1, "save_dir": save}},
    ]
    d, r = run_both(rows, process, keep_stats_in_res_ds=True)
    out_d, out_r = _norm(read_jsonl(d / "result.jsonl")), _norm(read_jsonl(r / "result.jsonl"))
    assert out_d == out_r
    assert sorted({x["id"] for x in out_d}) == [0, 1, 2, 3, 4]
    assert _ledger(d) == _ledger(r) == [(5, "video_duration_filter"), (6, "video_duration_filter")]
