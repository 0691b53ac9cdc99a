"""video_hand_action_compute_mapper: hand reconstructions and camera poses written out by hand,
with the world states and actions they must give worked out on paper."""

import math

import numpy as np
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.ops.mapper.video_hand_action_compute_mapper import gripper_from_hand_pose
from data_juicer.utils.constant import Fields

NAME = "video_hand_action_compute_mapper"
RZ90 = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]


def make(**kw):
    return OPERATORS.get(NAME)(**kw)


def c2w(R, t):
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = R, t
    return m.tolist()


def rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return [[1, 0, 0], [0, c, -s], [0, s, c]]


def test_gripper_from_finger_angles():
    assert gripper_from_hand_pose(None) == 1.0 and gripper_from_hand_pose([]) == 1.0
    assert gripper_from_hand_pose([0.1, 0, 0] * 15) == 1.0  # 0.1 rad: open
    assert gripper_from_hand_pose([[0, 0.375, 0]] * 15) == pytest.approx(0.0)  # half-way
    assert gripper_from_hand_pose([[0.0, 0.0, 0.7]] * 15) == -1.0  # a fist
    assert gripper_from_hand_pose([rot_x(0.2625)] * 15) == pytest.approx(0.5)  # rotation matrices


def test_states_actions_and_joints_in_world_space():
    cams = [c2w(np.eye(3), [0, 0, 0]), c2w(RZ90, [1.0, 0, 0]), c2w(np.eye(3), [0, 0, 2.0])]
    right = {"frame_ids": [0, 1, 2, 7], "transl": [[0.1, 0.2, 0.5]] * 4,
             "global_orient": [[0.0, 0.0, 0.0], np.eye(3).tolist(), [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
             "hand_pose": [[0.0] * 45, [[0, 0.375, 0]] * 15, [[0.8, 0, 0]] * 15, [0.0] * 45],
             "joints_cam": [[[0.0, 0.0, 1.0]] * 21, [[1.0, 0.0, 0.0]] * 21, [[0.0, 0.0, 0.0]] * 21,
                            [[0.0, 0.0, 0.0]] * 21]}
    left = {"frame_ids": [1], "transl": [[0, 0, 1]], "global_orient": [[0, 0, 0]], "hand_pose": [[0] * 45]}
    row = {Fields.meta: {"hand_reconstruction_hawor_tags": [{"right": right, "left": left}, {"right": right}],
                         "video_camera_pose_tags": [{"cam_c2w": cams}, {}]}}
    out = run_ops_on_rows([make()], [row])[0][Fields.meta]["hand_action_tags"]
    assert len(out) == 2
    r = out[0]["right"]
    assert r["valid_frame_ids"] == [0, 1, 2]  # frame 7 has no camera pose
    np.testing.assert_allclose(r["states"], [[0.1, 0.2, 0.5, 0, 0, 0, 0, 1.0],
                                             [0.8, 0.1, 0.5, 0, 0, math.pi / 2, 0, 0.0],
                                             [0.1, 0.2, 2.5, 0, 0, 0, 0, -1.0]], atol=1e-6)
    np.testing.assert_allclose(r["actions"], [[0.7, -0.1, 0, 0, 0, math.pi / 2, 0.0],
                                              [-0.7, 0.1, 2.0, 0, 0, -math.pi / 2, -1.0],
                                              [0, 0, 0, 0, 0, 0, -1.0]], atol=1e-6)
    assert r["joints_cam"][1][0] == [1.0, 0.0, 0.0] and len(r["joints_world"]) == 3
    np.testing.assert_allclose(r["joints_world"][1][0], [1.0, 1.0, 0.0], atol=1e-12)  # Rz90 (1,0,0) + (1,0,0)
    np.testing.assert_allclose(r["joints_world"][2][0], [0.0, 0.0, 2.0])
    assert out[0]["left"] == {"states": [], "actions": [], "valid_frame_ids": [], "hand_type": "left",
                              "joints_cam": [], "joints_world": []}  # a single frame
    assert out[1]["right"]["states"] == [] and set(out[1]) == {"right", "left"}  # no cam_c2w


def test_npy_camera_poses_hand_type_and_existing_field(tmp_path):
    path = str(tmp_path / "c2w.npy")
    np.save(path, np.stack([np.eye(4), np.eye(4)]))
    right = {"frame_ids": [0, 1], "transl": [[0, 0, 1], [0, 0, 2]], "global_orient": [[0, 0, 0]] * 2,
             "hand_pose": [[0] * 45] * 2}
    row = {Fields.meta: {"hand_reconstruction_hawor_tags": [{"right": right}],
                         "video_camera_pose_tags": [{"cam_c2w": path}]}}
    out = run_ops_on_rows([make(hand_type="right")], [row])[0][Fields.meta]["hand_action_tags"]
    assert list(out[0]) == ["right"] and out[0]["right"]["actions"][0][:3] == [0, 0, 1.0]
    assert out[0]["right"]["joints_cam"] is None  # no joints given, as Data-Juicer writes it
    done = {Fields.meta: {"hand_action_tags": ["kept"]}}
    assert run_ops_on_rows([make()], [done])[0][Fields.meta]["hand_action_tags"] == ["kept"]
    assert run_ops_on_rows([make()], [{Fields.meta: {}}])[0][Fields.meta]["hand_action_tags"] == []


def test_params_and_missing_npy(tmp_path):
    with pytest.raises(ValueError, match="hand_type"):
        make(hand_type="both_hands")
    row = {Fields.meta: {"hand_reconstruction_hawor_tags": [{"right": {"frame_ids": [0, 1]}}],
                         "video_camera_pose_tags": [{"cam_c2w": str(tmp_path / "gone.npy")}]}}
    with pytest.raises(RuntimeError, match="gone.npy"):
        run_ops_on_rows([make(skip_op_error=False)], [row])
