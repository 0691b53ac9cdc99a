"""video_trajectory_overlay_mapper: 64x48 grey frames seen by a camera at the world origin looking
down +z (fx = fy = 50, centre 32, 24); the palm moves along z = 1 from x = -0.3 to 0.3, i.e. from
pixel (17, 24) to (47, 24)."""

import math
import os

import numpy as np
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.ops.mapper.video_trajectory_overlay_mapper import project, temporal_color
from data_juicer.utils.constant import Fields

cv2 = pytest.importorskip("cv2")
NAME = "video_trajectory_overlay_mapper"
K = [[50.0, 0, 32], [0, 50.0, 24], [0, 0, 1]]
GREY = 128


def make(**kw):
    return OPERATORS.get(NAME)(**kw)


def write_frames(folder, n=12):
    os.makedirs(folder, exist_ok=True)
    paths = []
    for f in range(n):
        paths.append(os.path.join(folder, f"f{f:03d}.png"))
        cv2.imwrite(paths[-1], np.full((48, 64, 3), GREY, np.uint8))
    return paths


def segment(fids, seg_id=0, hand="right"):
    xs = np.linspace(-0.3, 0.3, len(fids))
    joints = [[[0.0, 0.0, 1.0]] * 9 + [[x, 0.0, 1.0]] + [[0.0, 0.0, 1.0]] * 11 for x in xs]
    return {"hand_type": hand, "segment_id": seg_id, "start_frame": fids[0], "end_frame": fids[-1],
            "states": [[0.0] * 8] * len(fids), "valid_frame_ids": list(fids), "joints_world": joints}


def sample(frames, segs, moge=None, hawor=None):
    meta = {"atomic_action_segments": segs,
            "video_camera_pose_tags": [{"cam_c2w": [np.eye(4).tolist()] * len(frames)}],
            "camera_calibration_moge_tags": [moge if moge is not None else {"intrinsics": [K] * len(frames)}]}
    if hawor is not None:
        meta["hand_reconstruction_hawor_tags"] = [hawor]
    return {"videos": ["/data/ego_clip.mp4"], "video_frames": [frames], Fields.meta: meta}


def test_colors_and_projection():
    assert [temporal_color(t) for t in (0, 0.25, 0.5, 1)] == [(255, 0, 0), (127, 127, 0), (0, 255, 0), (0, 0, 255)]
    uv = project(np.array([0.2, -0.1, 2.0]), np.eye(4), 64, 48, K=np.array(K))
    assert uv.tolist() == [37.0, 21.5]
    c2w = np.eye(4)
    c2w[:3, 3] = [0.0, 0.0, -1.0]  # camera one unit back: the point is 3 units away
    fov = 2 * math.atan(64 / 100)  # fx = 50
    assert project(np.array([0.3, 0.0, 2.0]), c2w, 64, 48, fov_x=fov).tolist() == pytest.approx([37.0, 24.0])


def test_draw_blends_dot_and_line():
    op = make()
    frame = np.full((48, 64, 3), GREY, np.uint8)
    out = op.draw(frame, np.array([[17.0, 24.0], [32.0, 24.0], [47.0, 24.0], [80.0, 24.0]]))
    assert out is frame
    assert frame[24, 17].tolist() == [217, 108, 38]  # 0.7 * blue dot (255, 100, 0) + 0.3 * grey
    # the 2nd piece has t = 1/3: colour (85, 170, 0), blended 0.7 / 0.3 with grey
    assert frame[24, 40].tolist() == [98, 157, 38]
    assert frame[5, 5].tolist() == [GREY] * 3  # far from the drawing
    assert frame[24, 63].tolist() != [GREY] * 3  # the off-screen last point is clamped to the border


def test_overlays_sampled_frames(tmp_path):
    frames = write_frames(str(tmp_path / "frames"))
    segs = [segment(list(range(1, 11))), segment([3, 4], seg_id=1, hand="left"), segment([7], seg_id=2)]
    out = run_ops_on_rows([make(n_sample_frames=3, dot_radius=4)], [sample(frames, segs)])[0]
    s0, s1, s2 = out[Fields.meta]["atomic_action_segments"]
    folder = str(tmp_path / "frames" / "trajectory_overlays")
    assert s0["sampled_frame_indices"] == [1, 5, 10]
    assert s0["overlay_frames"] == [os.path.join(folder, f"ego_clip_seg0_right_f{f:06d}_overlay.jpg")
                                    for f in (1, 5, 10)]
    assert s1["sampled_frame_indices"] == [3, 4] and len(s1["overlay_frames"]) == 2
    assert s2["overlay_frames"] == [] and s2["sampled_frame_indices"] == []
    assert sorted(os.listdir(folder)) == sorted(os.path.basename(p) for p in s0["overlay_frames"] + s1["overlay_frames"])
    first = cv2.imread(s0["overlay_frames"][0])
    assert first.shape == (48, 64, 3)
    assert np.abs(first[24, 17].astype(int) - [217, 108, 38]).max() <= 12  # the dot at x = -0.3 (JPEG)
    assert np.abs(first[4, 4].astype(int) - GREY).max() <= 3
    last = cv2.imread(s0["overlay_frames"][2])  # only the current point: a dot at (47, 24), no line
    assert np.abs(last[24, 47].astype(int) - [217, 108, 38]).max() <= 12
    assert np.abs(last[24, 20].astype(int) - GREY).max() <= 3


def test_fov_fallbacks_give_the_same_picture(tmp_path):
    frames = write_frames(str(tmp_path / "frames"), n=4)
    fov = 2 * math.atan(64 / 100)
    outs = []
    for i, (moge, hawor) in enumerate([(None, None), ({"hfov": [fov, fov, 9.0]}, None), ({}, {"fov_x": fov})]):
        s = run_ops_on_rows([make(save_dir=str(tmp_path / f"o{i}"))], [sample(frames, [segment([0, 1, 2])],
                                                                               moge, hawor)])[0]
        outs.append(cv2.imread(s[Fields.meta]["atomic_action_segments"][0]["overlay_frames"][0]).astype(int))
    assert np.abs(outs[0] - outs[1]).max() == 0 and np.abs(outs[0] - outs[2]).max() == 0


def test_unchanged_without_inputs(tmp_path):
    frames = write_frames(str(tmp_path / "frames"), n=3)
    s = sample(frames, [segment([0, 1, 2])])
    s[Fields.meta]["video_camera_pose_tags"] = []
    out = run_ops_on_rows([make()], [s])[0]
    assert "overlay_frames" not in out[Fields.meta]["atomic_action_segments"][0]
    s = sample(frames, [segment([0, 1, 2])], moge={})
    out = run_ops_on_rows([make()], [s])[0]
    assert "overlay_frames" not in out[Fields.meta]["atomic_action_segments"][0]
    assert not os.path.exists(tmp_path / "frames" / "trajectory_overlays")


def test_params_and_bad_frames(tmp_path):
    with pytest.raises(ValueError, match="n_sample_frames"):
        make(n_sample_frames=0)
    with pytest.raises(ValueError, match="trajectory_alpha"):
        make(trajectory_alpha=1.5)
    frames = write_frames(str(tmp_path / "frames"), n=3)
    frames[1] = str(tmp_path / "gone.png")
    with pytest.raises(RuntimeError, match="gone.png"):
        run_ops_on_rows([make(skip_op_error=False)], [sample(frames, [segment([0, 1, 2])])])
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not a png")
    frames[1] = str(junk)
    with pytest.raises(RuntimeError, match="junk.png"):
        run_ops_on_rows([make(skip_op_error=False)], [sample(frames, [segment([0, 1, 2])])])
