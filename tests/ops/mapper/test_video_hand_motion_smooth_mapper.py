"""video_hand_motion_smooth_mapper: outlier replacement and Savitzky-Golay smoothing on short
literal trajectories whose results are worked out by hand."""

import numpy as np
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.ops.mapper.video_hand_motion_smooth_mapper import replace_outliers
from data_juicer.utils.constant import Fields

NAME = "video_hand_motion_smooth_mapper"
# Savitzky-Golay, window 11, order 2/3: centre weights (-36, 9, 44, 69, 84, 89, 84, ...)/429
SG11 = [-36, 9, 44, 69, 84, 89, 84, 69, 44, 9, -36]


def make(**kw):
    return OPERATORS.get(NAME)(**kw)


def hand(positions, eulers=None, gripper=None, **extra):
    n = len(positions)
    eulers = eulers if eulers is not None else [[0.1, -0.2, 0.3]] * n
    gripper = gripper if gripper is not None else [1.0 if t % 3 else -1.0 for t in range(n)]
    states = [[*p, *e, 9.0, g] for p, e, g in zip(positions, eulers, gripper)]
    return {"hand_type": "right", "states": states, "actions": [[0] * 7] * n,
            "valid_frame_ids": list(range(10, 10 + n)), **extra}


def test_outliers_are_interpolated_not_removed():
    x = np.array([0.1 * t + 0.01 * (t % 2) for t in range(12)])
    x[6] = 3.0  # a spike: jumps 5->6 and 6->7 are outliers (median speed 0.11, MAD 0.02)
    pos = np.stack([x, np.zeros(12), np.zeros(12)], axis=1)
    out = replace_outliers(pos, 5.0)
    assert out.shape == (12, 3)
    # frame 6 between frames 5 and 8 (1/3 of the way), frame 7 from the same pair (2/3)
    assert out[6, 0] == pytest.approx(2 / 3 * 0.51 + 1 / 3 * 0.8)
    assert out[7, 0] == pytest.approx(1 / 3 * 0.51 + 2 / 3 * 0.8)
    np.testing.assert_array_equal(np.delete(out, [6, 7], axis=0), np.delete(pos, [6, 7], axis=0))
    assert replace_outliers(pos, 100.0).tolist() == pos.tolist()  # limit 3.08 > the 2.49 jump: kept
    flat = np.stack([np.arange(8.0), np.zeros(8), np.zeros(8)], axis=1)
    assert replace_outliers(flat, 5.0).tolist() == flat.tolist()  # MAD 0: nothing to judge by


def test_smooths_positions_and_keeps_frames():
    pos = [[0.0, 0.0, 0.0]] * 11
    pos = [list(p) for p in pos]
    pos[5][1] = 1.0  # an impulse (no outlier: median speed and MAD are 0)
    row = {Fields.meta: {"hand_action_tags": [{"right": hand(pos, joints_cam=[[1]] * 11), "left": {"states": []}},
                                              None]}}
    out = run_ops_on_rows([make()], [row])[0][Fields.meta]["hand_action_tags"]
    r = out[0]["right"]
    assert r["valid_frame_ids"] == list(range(10, 21)) and len(r["states"]) == 11
    ys = [s[1] for s in r["states"]]
    assert ys[5] == pytest.approx(89 / 429, abs=1e-7) and ys[4] == pytest.approx(84 / 429, abs=1e-7)
    assert ys[3] == pytest.approx(69 / 429, abs=1e-7)
    np.testing.assert_allclose([s[3:6] for s in r["states"]], [[0.1, -0.2, 0.3]] * 11, atol=1e-6)
    assert [s[6] for s in r["states"]] == [0.0] * 11  # pad zeroed
    assert [s[7] for s in r["states"]] == [1.0 if t % 3 else -1.0 for t in range(11)]
    assert r["actions"][4][1] == pytest.approx((89 - 84) / 429, abs=1e-6)
    assert r["actions"][4][6] == 1.0 and r["actions"][-1] == [0, 0, 0, 0, 0, 0, 1.0]
    assert r["joints_cam"] == [[1]] * 11 and r["joints_world"] == []
    assert out[0]["left"] == {"states": []} and out[1] is None


def test_a_cubic_passes_unchanged_and_joints_are_smoothed():
    ts = np.arange(15.0)
    pos = np.stack([0.01 * ts ** 3, 0.2 * ts, 1 - 0.05 * ts ** 2], axis=1)
    joints = np.repeat(pos[:, None, :], 21, axis=1)
    joints[7, 3, 0] += 1.0
    row = {Fields.meta: {"hand_action_tags": [{"right": hand(pos.tolist(), joints_world=joints.tolist())}]}}
    r = run_ops_on_rows([make()], [row])[0][Fields.meta]["hand_action_tags"][0]["right"]
    np.testing.assert_allclose([s[:3] for s in r["states"]], pos, rtol=1e-6, atol=1e-5)
    jw = np.asarray(r["joints_world"])
    np.testing.assert_allclose(jw[:, 0, :], pos, atol=1e-9)
    assert jw[7, 3, 0] - pos[7, 0] == pytest.approx(89 / 429)


def test_short_hands_and_small_windows():
    short = hand([[0, 0, 0]] * 4)
    row = {Fields.meta: {"hand_action_tags": [{"right": short}]}}
    assert run_ops_on_rows([make()], [row])[0][Fields.meta]["hand_action_tags"][0]["right"] == short
    # window shrinks to 5 frames, but 5 < polyorder 4 + 2: positions stay, pad and actions are rewritten
    pos = [[0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 1, 0], [0, 0, 0]]
    r = run_ops_on_rows([make(savgol_polyorder=4)], [{Fields.meta: {"hand_action_tags": [{"right": hand(pos)}]}}])
    r = r[0][Fields.meta]["hand_action_tags"][0]["right"]
    assert [s[1] for s in r["states"]] == [0, 1, 0, 1, 0] and r["actions"][0][1] == 1.0
    with pytest.raises(ValueError, match="savgol"):
        make(savgol_window=0)
