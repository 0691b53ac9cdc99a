"""video_undistort_mapper: remap tables checked against values printed by OpenCV's
``cv2.omnidir.initUndistortRectifyMap`` (opencv-contrib 4.13, in Data-Juicer's venv), and videos
undistorted from the 64x48 testsrc2 clips of tests/media/video_files.py."""

import json
import os

import av
import numpy as np
import psutil
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.ops.mapper.video_undistort_mapper import omnidir_rectify_maps
from data_juicer.utils.constant import Fields
from tests.conftest import read_jsonl
from tests.media.video_files import video_files  # noqa: F401

NAME = "video_undistort_mapper"
K = [[40.0, 0, 32], [0, 38, 24], [0, 0, 1]]
D = [-0.2, 0.05, 0.001, -0.002]
IDENTITY = {"intrinsics": K, "xi": 0.0}
# pinhole, no distortion, a wider new camera: the output's border lies outside the source
ZOOM_OUT = {"intrinsics": K, "xi": [0.0], "new_intrinsics": [[20.0, 0, 32], [0, 19, 24], [0, 0, 1]]}


def make(tmp_path, **kw):
    return OPERATORS.get(NAME)(output_video_dir=str(tmp_path / "undist"), **kw)


def frames(path):
    with av.open(path) as c:
        s = c.streams.video[0]
        info = (s.codec_context.name, s.codec_context.pix_fmt, s.width, s.height, float(s.average_rate))
        return [f.to_ndarray(format="rgb24").astype(int) for f in c.decode(video=0)], info


def listing(folder):
    return os.listdir(folder) if folder.exists() else []


def row(path, *cals):
    return {"videos": [path] * len(cals), Fields.meta: {"camera_calibration": list(cals)}}


def test_maps_are_identity_for_a_pinhole_without_distortion():
    m1, m2 = omnidir_rectify_maps(np.array(K), np.zeros(4), 0.0, np.eye(3), np.array(K), (64, 48))
    assert m1.shape == (48, 64, 2) and m1.dtype == np.int16 and m2.dtype == np.uint16
    assert m1[0, 0].tolist() == [0, 0] and m1[47, 63].tolist() == [63, 47] and m1[10, 50].tolist() == [50, 10]
    assert int(m2.max()) == 0


def test_maps_equal_opencv_omnidir():
    k, d = np.array(K, np.float32), np.array(D, np.float32)
    m1, m2 = omnidir_rectify_maps(k, d, 0.8, np.eye(3), k, (64, 48))
    # cv2.omnidir.initUndistortRectifyMap(K, D, [0.8], I, K, (64, 48), CV_16SC2, RECTIFY_PERSPECTIVE)
    assert (m1[0, 0].tolist(), int(m2[0, 0])) == ([17, 13], 309)
    assert (m1[24, 32].tolist(), int(m2[24, 32])) == ([32, 24], 0)
    assert (m1[10, 50].tolist(), int(m2[10, 50])) == ([41, 16], 901)
    assert (m1[47, 63].tolist(), int(m2[47, 63])) == ([46, 34], 416)
    p = np.array([[20.0, 0, 32], [0, 19, 24], [0, 0, 1]], np.float32)
    m1, m2 = omnidir_rectify_maps(k, d, 0.8, np.eye(3), p, (64, 48))
    assert (m1[0, 0].tolist(), int(m2[0, 0])) == ([11, 8], 521)
    assert (m1[10, 50].tolist(), int(m2[10, 50])) == ([47, 12], 105)


def test_undistorts_each_video(video_files, tmp_path):
    src, _ = frames(video_files["motion"])
    out = run_ops_on_rows([make(tmp_path)], [row(video_files["motion"], IDENTITY, ZOOM_OUT)])[0]
    same, wide = out["undistorted_video"]
    assert out["videos"] == [video_files["motion"]] * 2
    assert os.path.dirname(same) == str(tmp_path / "undist") and same.endswith(".mp4") and same != wide
    a, info = frames(same)
    assert info == ("h264", "yuv420p", 64, 48, 10.0) and len(a) == 20
    assert np.abs(a[7] - src[7]).mean() < 6  # an identity remap: only the re-encoding differs
    b, _ = frames(wide)
    assert len(b) == 20
    assert b[3][0, 0].max() <= 3 and b[3][47, 63].max() <= 3  # outside the source: black border
    assert np.abs(b[3][22:27, 30:35] - src[3][22:27, 30:35]).mean() < 25  # the centre stays put


def test_rerun_reuses_the_file_and_batches_join(video_files, tmp_path):
    op = make(tmp_path, batch_size_each_video=7)
    first = run_ops_on_rows([op], [row(video_files["motion"], IDENTITY)])[0]["undistorted_video"][0]
    mtime = os.stat(first).st_mtime_ns
    again = run_ops_on_rows([op], [row(video_files["motion"], IDENTITY)])[0]["undistorted_video"][0]
    assert again == first and os.stat(first).st_mtime_ns == mtime
    assert len(frames(first)[0]) == 20  # three pieces of 7, 7 and 6 frames
    assert sorted(os.listdir(tmp_path / "undist")) == [os.path.basename(first)]  # no pieces left


def test_per_frame_intrinsics_and_xi_use_the_median(tmp_path):
    op = make(tmp_path)
    ks = [[[40, 0, 30], [0, 38, 20], [0, 0, 1]], [[44, 0, 32], [0, 36, 24], [0, 0, 1]],
          [[41, 0, 35], [0, 39, 22], [0, 0, 1]]]
    k, d, xi, r, p = op.calibration(row("v.mp4", {"intrinsics": ks, "xi": [0.5, 0.9, 0.6]}), 0, "v.mp4")
    assert k.tolist() == [[41, 0, 32], [0, 38, 22], [0, 0, 1]] and p is k
    assert xi == pytest.approx(0.6) and d.tolist() == [0, 0, 0, 0] and r.tolist() == np.eye(3).tolist()


def test_existing_field_and_no_video(video_files, tmp_path):
    op = make(tmp_path)
    out = run_ops_on_rows([op], [{"videos": [video_files["motion"]], "undistorted_video": ["done.mp4"]},
                                 {"videos": []}])
    assert out[0]["undistorted_video"] == ["done.mp4"] and out[1]["undistorted_video"] == []
    assert listing(tmp_path / "undist") == []


def test_params_and_bad_calibration(video_files, tmp_path):
    with pytest.raises(ValueError, match="output_video_dir"):
        OPERATORS.get(NAME)()
    with pytest.raises(ValueError, match="batch_size_each_video"):
        make(tmp_path, batch_size_each_video=0)
    op = make(tmp_path, skip_op_error=False)
    with pytest.raises(RuntimeError, match="lacks 'xi'"):
        run_ops_on_rows([op], [row(video_files["motion"], {"intrinsics": K})])
    with pytest.raises(RuntimeError, match=r"has no calibration.*camera_calibration\[0\]"):
        run_ops_on_rows([op], [{"videos": [video_files["motion"]]}])


@pytest.mark.parametrize("bad", ["missing", "corrupt", "truncated"])
def test_bad_video_fails_naming_it(video_files, bad, tmp_path):
    before = psutil.Process().num_fds()
    with pytest.raises(RuntimeError, match=os.path.basename(video_files[bad])):
        run_ops_on_rows([make(tmp_path, skip_op_error=False)], [row(video_files[bad], IDENTITY)])
    assert psutil.Process().num_fds() == before
    assert listing(tmp_path / "undist") == []


def test_end_to_end_bad_videos_go_to_the_ledger(video_files, tmp_path, make_recipe):
    """The family's e2e check: undistort and trajectory overlay on good, missing and corrupt media."""
    from data_juicer.cli.process import main

    cv2 = pytest.importorskip("cv2")
    frame = str(tmp_path / "f0.png")
    cv2.imwrite(frame, np.full((48, 64, 3), 90, np.uint8))
    seg = {"hand_type": "right", "segment_id": 0, "states": [[0, 0, 1, 0, 0, 0, 0, 1]] * 2, "valid_frame_ids": [0, 1]}
    overlay_meta = {"atomic_action_segments": [seg], "video_camera_pose_tags": [{"cam_c2w": [np.eye(4).tolist()] * 2}],
                    "camera_calibration_moge_tags": [{"hfov": 1.0}]}
    rows = [{"id": "a", "text": "<__dj__video> x", **row(video_files["motion"], IDENTITY)},
            {"id": "gone", "text": "<__dj__video> x", **row(video_files["missing"], IDENTITY)},
            {"id": "junk", "text": "<__dj__video> x", **row(video_files["corrupt"], IDENTITY)},
            {"id": "frames", "text": "f", "video_frames": [[frame, frame]], Fields.meta: overlay_meta},
            {"id": "frame_gone", "text": "f", "video_frames": [[frame, str(tmp_path / "nope.png")]],
             Fields.meta: overlay_meta}]
    recipe = make_recipe(rows, [{NAME: {"output_video_dir": str(tmp_path / "o")}},
                                {"video_trajectory_overlay_mapper": {"save_dir": str(tmp_path / "ov")}}],
                         keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = {r["id"]: r for r in read_jsonl(out / "result.jsonl")}
    assert sorted(res) == ["a", "frames"]
    assert len(res["a"]["undistorted_video"]) == 1 and os.path.exists(res["a"]["undistorted_video"][0])
    meta = res["frames"][Fields.meta]
    meta = json.loads(meta) if isinstance(meta, str) else meta
    assert len(meta["atomic_action_segments"][0]["overlay_frames"]) == 2
    job = next(os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert sorted((e["sample"]["id"], e["op"]) for e in errors) == [
        ("frame_gone", "video_trajectory_overlay_mapper"), ("gone", NAME), ("junk", NAME)]
    text = json.dumps(errors)
    assert "does_not_exist.mp4" in text and "corrupt.mp4" in text and "nope.png" in text
