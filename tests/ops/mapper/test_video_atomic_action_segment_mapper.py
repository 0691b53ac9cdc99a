"""video_atomic_action_segment_mapper: trajectories whose wrist speed has known minima, and the
cut rules checked on speed curves written by hand."""

import numpy as np
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.ops.mapper.video_atomic_action_segment_mapper import local_minima, wrist_speed
from data_juicer.utils.constant import Fields

NAME = "video_atomic_action_segment_mapper"


def make(**kw):
    return OPERATORS.get(NAME)(**kw)


def hand(n, period=25, first_fid=100, joints=True):
    """Speed 0.02 + 0.1 |sin(pi t / period)|: slowest at t = period, 2 period, ..."""
    speed = 0.02 + 0.1 * np.abs(np.sin(np.pi * np.arange(n) / period))
    x = np.concatenate([[0.0], np.cumsum(speed[1:])])
    h = {"states": [[float(v), 0, 0, 0, 0, 0, 0, 1.0] for v in x], "actions": [[float(t)] * 7 for t in range(n)],
         "valid_frame_ids": list(range(first_fid, first_fid + n))}
    if joints:
        h["joints_world"] = [[[float(t)] * 3] * 21 for t in range(n)]
    return h


def test_cuts_at_speed_minima():
    row = {Fields.meta: {"hand_action_tags": [{"right": hand(70), "left": hand(40, period=20, first_fid=110,
                                                                                  joints=False)}]}}
    segs = run_ops_on_rows([make()], [row])[0][Fields.meta]["atomic_action_segments"]
    got = [(s["hand_type"], s["segment_id"], s["start_frame"], s["end_frame"], len(s["states"])) for s in segs]
    assert got == [("right", 0, 100, 124, 25), ("left", 0, 110, 129, 20), ("right", 1, 125, 149, 25),
                   ("left", 1, 130, 149, 20), ("right", 2, 150, 169, 20)]
    r1 = segs[2]
    assert r1["valid_frame_ids"] == list(range(125, 150)) and r1["actions"][0] == [25.0] * 7
    assert r1["joints_world"][0][0] == [25.0] * 3 and "joints_cam" not in r1
    assert "joints_world" not in segs[1]


def test_hand_type_and_short_hands():
    row = {Fields.meta: {"hand_action_tags": [{"right": hand(70), "left": hand(7)}, None]}}
    only_left = run_ops_on_rows([make(hand_type="left")], [row])[0][Fields.meta]["atomic_action_segments"]
    assert only_left == []  # 7 states < min_segment_frames 8
    right = run_ops_on_rows([make(hand_type="right", min_window=40)], [row])[0][Fields.meta]
    assert [(s["start_frame"], s["end_frame"]) for s in right["atomic_action_segments"]] == [(100, 169)]
    assert run_ops_on_rows([make()], [{Fields.meta: {}}])[0][Fields.meta] == {}
    with pytest.raises(ValueError, match="hand_type"):
        make(hand_type="any")


def test_cut_rules_on_written_speeds():
    op = make(min_window=10, min_segment_frames=5, max_segment_frames=20)
    speed = 1 + 0.001 * np.arange(70)  # rising: no flat stretch counts as a minimum
    speed[[20, 40, 48]] = [0.5, 0.3, 0.1]
    assert local_minima(speed, 10) == [20, 48]  # 40 sees the deeper 48 within 10 frames
    # [20, 48) is 28 > 20 frames: split at its slowest frame, 40
    assert op.cut_points(speed, 70) == [20, 40, 48]
    speed = 1 + 0.001 * np.arange(40)
    speed[[10, 13, 36]] = [0.2, 0.1, 0.3]
    op = make(min_window=2, min_segment_frames=8)
    assert local_minima(speed, 2) == [10, 13, 36]
    # 13 is 3 frames after 10 (< 8): dropped; 36 leaves a 4-frame tail: dropped
    assert op.cut_points(speed, 40) == [10]
    assert wrist_speed(np.array([[0, 0, 0], [3, 4, 0], [3, 4, 1]])).tolist() == [0, 5, 1]
