"""The hand / ego-video ops give the same output on the Ray executor as on the default one: one
recipe of all seven over a video to undistort, a missing video, a hand reconstruction to turn
into segments, overlays and LeRobot episodes, and two overlapping clips to reassemble."""
import json
import os

import numpy as np
import pytest

from tests.conftest import read_jsonl
from tests.media.video_files import video_files  # noqa: F401

cv2 = pytest.importorskip("cv2")
V = "<__dj__video>"
META = "__dj__meta__"
K = [[50.0, 0, 32], [0, 50.0, 24], [0, 0, 1]]


def _frames(folder, n):
    os.makedirs(folder, exist_ok=True)
    out = []
    for f in range(n):
        out.append(os.path.join(folder, f"f{f:03d}.png"))
        cv2.imwrite(out[-1], np.full((48, 64, 3), 5 + 8 * f, np.uint8))
    return out


def _hawor(fids, x0=0.0):
    t = np.arange(len(fids))
    transl = np.stack([x0 + 0.1 * np.sin(t / 4), 0.05 * np.cos(t / 5), 1.0 + 0.01 * t], 1)
    return {"frame_ids": fids, "transl": transl.tolist(), "global_orient": [[0.1, 0.2 + 0.01 * k, 0.0] for k in t],
            "hand_pose": [[0.02 * (k % 7)] * 45 for k in t],
            "joints_cam": np.repeat(transl[:, None, :], 21, axis=1).tolist()}


def _hand_result(n, x0):
    states = [[x0 + 0.02 * t, 0.0, 1.0, 0.0, 0.1, 0.0, 0.0, 1.0] for t in range(n)]
    return {"right": {"hand_type": "right", "states": states, "actions": [[0.0] * 7] * n,
                      "valid_frame_ids": list(range(n)), "joints_cam": [], "joints_world": []}}


def _ledger(folder):
    out = []
    for root, _, names in os.walk(folder):
        if "errors.jsonl" in names:
            out += [(e["sample"]["id"], e["op"]) for e in read_jsonl(os.path.join(root, "errors.jsonl"))]
    return sorted(out)


def _norm(rows):
    for r in rows:
        for k in ("__dj__stats__", META):
            if isinstance(r.get(k), str):
                r[k] = json.loads(r[k])
    return sorted(rows, key=lambda r: r["id"])


@pytest.mark.slow  # 5 s; tests/ray/test_ray_video_parity.py keeps video ops on Ray in the default suite
def test_hand_video_ops_same_on_ray(run_both, video_files, tmp_path):
    n = 30
    frames = _frames(str(tmp_path / "frames"), n)
    cams = [np.eye(4).tolist()] * n
    calib = {"intrinsics": [[40.0, 0, 32], [0, 38, 24], [0, 0, 1]], "xi": [0.8],
             "dist_coeffs": [-0.2, 0.05, 0.001, -0.002]}
    clip_frames = [frames[0:12], frames[8:20]]
    rows = [
        {"id": 0, "text": f"{V} undistort", "videos": [video_files["motion"]], META: {"camera_calibration": [calib]}},
        {"id": 1, "text": f"{V} gone", "videos": [video_files["missing"]], META: {"camera_calibration": [calib]}},
        {"id": 2, "text": "hands", "video_frames": [frames],
         META: {"hand_reconstruction_hawor_tags": [{"right": _hawor(list(range(n))), "left": _hawor(list(range(5, 25)), 0.3)}],
                "video_camera_pose_tags": [{"cam_c2w": cams}], "camera_calibration_moge_tags": [{"intrinsics": [K] * n}]}},
        {"id": 3, "text": "clips", "clips": ["c0.mp4", "c1.mp4"], "video_frames": clip_frames,
         META: {"hand_action_tags": [_hand_result(12, 0.0), _hand_result(12, 0.16)],
                "video_camera_pose_tags": [{"cam_c2w": cams[:12]}, {"cam_c2w": cams[:12]}],
                "camera_calibration_moge_tags": [{"hfov": [1.2] * 12}, {"hfov": [1.2] * 12}]}},
    ]
    process = [
        {"video_undistort_mapper": {"output_video_dir": str(tmp_path / "undist")}},
        {"video_clip_reassembly_mapper": {"split_duration": 1.2, "overlap_duration": 0.4, "fps": 10}},
        {"video_hand_action_compute_mapper": {}},
        {"video_hand_motion_smooth_mapper": {"savgol_window": 7}},
        {"video_atomic_action_segment_mapper": {"min_window": 4, "min_segment_frames": 4}},
        {"video_trajectory_overlay_mapper": {"save_dir": str(tmp_path / "overlays"), "n_sample_frames": 3}},
        {"export_to_lerobot_mapper": {"output_dir": str(tmp_path / "lerobot"),
                                      "segment_field": "atomic_action_segments"}},
    ]
    d, r = run_both(rows, process, keep_stats_in_res_ds=True)
    out_d, out_r = _norm(read_jsonl(d / "result.jsonl")), _norm(read_jsonl(r / "result.jsonl"))
    assert out_d == out_r
    assert [x["id"] for x in out_d] == [0, 2, 3]
    assert _ledger(d) == _ledger(r) == [(1, "video_undistort_mapper")]
    by_id = {x["id"]: x for x in out_d}
    assert os.path.exists(by_id[0]["undistorted_video"][0])
    segs = by_id[2][META]["atomic_action_segments"]
    assert {s["hand_type"] for s in segs} == {"right", "left"}
    assert all(len(s["overlay_frames"]) == min(3, len(s["states"])) for s in segs)
    assert len(by_id[2][META]["lerobot_export"]) == len(segs)
    assert by_id[3]["video_frames"] == [frames[:20]] and by_id[3]["clips"] == ["c0.mp4"]
    assert by_id[3][META]["hand_action_tags"][0]["right"]["valid_frame_ids"] == list(range(20))
