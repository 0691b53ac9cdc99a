"""video_clip_reassembly_mapper: a 14-frame "video" (PNG frames of distinct grey levels) cut into
two overlapping clips, frames 0-7 and 5-13; clip 1's results are expressed in its own world frame,
a known rigid transform away from clip 0's, so the merged result must be the global trajectory."""

import os

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.ops.mapper.video_clip_reassembly_mapper import blend_weight, fill_gaps
from data_juicer.utils.constant import Fields

NAME = "video_clip_reassembly_mapper"
N, START1 = 14, 5
# clip 1's world -> clip 0's world: 30 degrees about z, then a shift
T = np.eye(4)
T[:3, :3] = Rotation.from_euler("z", 30, degrees=True).as_matrix()
T[:3, 3] = [1.0, 2.0, 3.0]


def make(**kw):
    return OPERATORS.get(NAME)(**kw)


def write_frames(folder):
    cv2 = pytest.importorskip("cv2")
    os.makedirs(folder, exist_ok=True)
    paths = []
    for f in range(N):
        p = os.path.join(folder, f"frame_{f:03d}.png")
        cv2.imwrite(p, np.full((6, 8, 3), 10 + 15 * f, np.uint8))
        paths.append(p)
    return paths


def global_state(f):
    return [0.1 * f, 0.2, 0.5 + 0.01 * f * f, 0.1, 0.02 * f, -0.3, 0.0, 1.0 if f % 4 < 2 else -1.0]


def global_c2w(f):
    m = np.eye(4)
    m[:3, :3] = Rotation.from_euler("xyz", [0.01 * f, 0.2, 0.0]).as_matrix()
    m[:3, 3] = [0.05 * f, 0.0, -0.1 * f]
    return m


def to_clip1(state):
    """A global state as clip 1's reconstruction reports it (in its own world frame)."""
    inv = np.linalg.inv(T)
    pos = inv[:3, :3] @ np.array(state[:3]) + inv[:3, 3]
    rot = Rotation.from_matrix(inv[:3, :3]) * Rotation.from_euler("xyz", state[3:6])
    return [*pos, *rot.as_euler("xyz"), 0.0, state[7]]


def sample(frames):
    clips = [list(range(8)), list(range(START1, N))]
    c2w = [[global_c2w(f).tolist() for f in clips[0]],
           [(np.linalg.inv(T) @ global_c2w(f)).tolist() for f in clips[1]]]
    states = [[global_state(f) for f in clips[0]], [to_clip1(global_state(f)) for f in clips[1]]]
    hands = [{"right": {"hand_type": "right", "states": s, "actions": [[0.0] * 7] * len(s),
                        "valid_frame_ids": list(range(len(s))), "joints_cam": [], "joints_world": []},
              "left": {"hand_type": "left", "states": [], "actions": [], "valid_frame_ids": [],
                       "joints_cam": [], "joints_world": []}} for s in states]
    hawor = [{"fov_x": 1.2, "right": {"frame_ids": list(range(len(c))), "transl": [[ci, f] for f in c],
                                      "global_orient": [], "hand_pose": [], "betas": []}}
             for ci, c in enumerate(clips)]
    moge = [{"hfov": [1.0 + 0.01 * f for f in c], "intrinsics": [[f] for f in c], "scale": ci}
            for ci, c in enumerate(clips)]
    return {"videos": ["long.mp4"], "clips": ["c0.mp4", "c1.mp4"],
            "video_frames": [[frames[f] for f in c] for c in clips],
            Fields.meta: {"hand_action_tags": hands, "video_camera_pose_tags": [{"cam_c2w": c2w[0], "k": 1},
                                                                                 {"cam_c2w": c2w[1]}],
                          "hand_reconstruction_hawor_tags": hawor, "camera_calibration_moge_tags": moge}}


@pytest.mark.parametrize("kw", [{}, {"split_duration": 0.8, "overlap_duration": 0.3, "fps": 10}])
def test_reassembles_two_overlapping_clips(tmp_path, kw):
    frames = write_frames(str(tmp_path / "frames"))
    out = run_ops_on_rows([make(**kw)], [sample(frames)])[0]
    meta = out[Fields.meta]
    assert out["video_frames"] == [frames]
    assert out["clips"] == ["long.mp4"]
    right = meta["hand_action_tags"][0]["right"]
    assert right["valid_frame_ids"] == list(range(N))
    np.testing.assert_allclose(right["states"], [global_state(f) for f in range(N)], atol=2e-6)
    # x of frame 0 -> 1 moves by 0.1; the last action keeps the last gripper only
    assert right["actions"][0][0] == pytest.approx(0.1, abs=1e-6) and right["actions"][-1][:6] == [0] * 6
    assert meta["hand_action_tags"][0]["left"]["states"] == []
    cam = meta["video_camera_pose_tags"]
    assert len(cam) == 1 and cam[0]["k"] == 1
    np.testing.assert_allclose(cam[0]["cam_c2w"], [global_c2w(f) for f in range(N)], atol=1e-9)
    hw = meta["hand_reconstruction_hawor_tags"]
    assert hw == [{"fov_x": 1.2, "right": {"frame_ids": list(range(N)),
                                           "transl": [[0, f] for f in range(8)] + [[1, f] for f in range(8, N)],
                                           "global_orient": [], "hand_pose": [], "betas": []}}]
    moge = meta["camera_calibration_moge_tags"]
    assert moge == [{"scale": 0, "hfov": pytest.approx([1.0 + 0.01 * f for f in range(N)]),
                     "intrinsics": [[f] for f in range(N)]}]


def test_overlap_is_cross_faded():
    op = make()
    clip0 = {"states": [[0.0] * 8] * 8, "actions": [], "valid_frame_ids": list(range(8))}
    clip1 = {"states": [[1.0] + [0.0] * 7] * 9, "actions": [], "valid_frame_ids": list(range(9))}
    merged = op.merge_hand([clip0, clip1], "right", [0, 5], [8, 9])
    xs = [round(s[0], 6) for s in merged["states"]]
    assert xs == [0, 0, 0, 0, 0, 0.25, 0.5, 0.75, 1, 1, 1, 1, 1, 1]
    assert blend_weight(0, 5, 2, 8, 0, 3) == 0.75 and blend_weight(1, 0, 2, 9, 3, 0) == 0.25


def test_offset_found_by_pixels_not_the_nominal_step(tmp_path):
    frames = write_frames(str(tmp_path / "frames"))
    op = make(split_duration=1.0, overlap_duration=0.3, fps=10)  # nominal step 7, real one 5
    assert op.clip_offsets([frames[0:8], frames[5:N]]) == [0, 5]
    # no match anywhere: the nominal step
    assert op.clip_offsets([frames[0:4], frames[9:N]]) == [0, 7]


def test_fill_gaps_as_data_juicer():
    assert fill_gaps([None, None, "a", None, None, "b", None]) == ["a", "a", "a", "a", "a", "b", "b"]


def test_single_clip_or_no_frames_unchanged():
    rows = [{"video_frames": [["a.png", "b.png"]], Fields.meta: {"hand_action_tags": [{}]}},
            {"video_frames": None, Fields.meta: {}}]
    out = run_ops_on_rows([make()], rows)
    assert out[0]["video_frames"] == [["a.png", "b.png"]] and out[0][Fields.meta] == {"hand_action_tags": [{}]}


def test_missing_frame_image_fails_naming_it(tmp_path):
    frames = write_frames(str(tmp_path / "frames"))
    s = sample(frames)
    s["video_frames"][1][0] = str(tmp_path / "gone.png")
    with pytest.raises(RuntimeError, match="gone.png"):
        run_ops_on_rows([make(skip_op_error=False)], [s])
