"""data_juicer.media.video: metadata, Data-Juicer's frame sampling, cuts, context sharing, fds.

The expected frame timestamps below were produced by Data-Juicer 1.6.1's own
``extract_video_frames_uniformly`` / ``get_key_frame_seconds`` on these same generated files.
"""

import os

import psutil
import pytest

from data_juicer.media import video as V
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401


def test_video_info_values(video_files):
    assert V.video_info(video_files["motion"]) == dict(duration=2.0, width=64, height=48, fps=10.0, frames=20,
                                                      has_audio=False)
    assert V.video_info(video_files["audio"])["has_audio"] is True
    vfr = V.video_info(video_files["vfr"])
    assert vfr["duration"] == 2.7 and vfr["frames"] == 12 and vfr["fps"] == pytest.approx(4.444444444444445)
    p = V.video_info(video_files["portrait"])
    assert (p["width"], p["height"], p["duration"]) == (48, 64, 1.0)
    assert V.video_info(video_files["one_frame"])["duration"] == 0.1
    webm = V.video_info(video_files["webm"])  # no stream duration / frame count: container's duration
    assert webm["duration"] == 1.0 and webm["frames"] is None


@pytest.mark.parametrize("name,n,expected", [
    ("motion", 1, [10240]),
    ("motion", 2, [0, 19456]),
    ("motion", 3, [0, 10240, 19456]),
    ("motion", 8, [0, 3072, 6144, 9216, 12288, 15360, 18432, 19456]),
    # capped at 20 frames; the last timestamp runs past the last frame, which is added again
    ("motion", 30, [0, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 9216, 10240, 11264, 12288, 13312, 14336,
                    15360, 16384, 17408, 18432, 19456, 19456]),
    ("short", 3, [0, 2048, 2048]),
    ("one_frame", 3, [0]),
    ("vfr", 5, [0, 8192, 16384, 22528, 26624]),
    ("long", 8, [0, 8192, 15360, 22528, 29696, 36864, 44032, 50176]),
    ("scenes", 3, [0, 15360, 29696]),
])
def test_uniform_frames_are_data_juicers(video_files, name, n, expected):
    with V.open_video(video_files[name]) as c:
        assert V.uniform_frame_pts(c, n) == expected
        # the decoded frames are the ones at those timestamps, in order
        assert V.extract_frames_uniformly(c, n, convert=lambda f: f.pts) == expected


def test_uniform_frames_are_rgb_images(video_files):
    frames = V.extract_frames_uniformly(video_files["motion"], 3)
    assert [f.size for f in frames] == [(64, 48)] * 3 and {f.mode for f in frames} == {"RGB"}
    assert frames[0].tobytes() != frames[1].tobytes()


def test_key_frames(video_files):
    assert V.key_frame_seconds(video_files["motion"]) == [0.0, 0.5, 1.0, 1.5]
    assert V.key_frame_seconds(video_files["vfr"]) == [0.0, 0.6, 1.6]
    assert len(V.extract_key_frames(video_files["long"])) == 5
    assert len(V.extract_key_frames(video_files["one_frame"])) == 1


def test_frames_by_second(video_files):
    # segments [0,1],[1,2],[2,3],[3,4] of the 5 s clip; the part after 4 s is skipped (as Data-Juicer)
    firsts = V.extract_frames_by_second(video_files["long"], 1, convert=lambda f: f.pts)
    assert firsts == [0, 10240, 20480, 30720]
    per_seg = V.extract_frames_by_second(video_files["long"], 2, frame_num=2, convert=lambda f: f.pts)
    assert per_seg == [0, 20480, 20480, 40960]  # [0, 2] and [2, 4]: a boundary frame ends one, starts the next


def test_decode_by_index_repeats(video_files):
    with V.open_video(video_files["motion"]) as c:
        assert V.decode_frames_by_index(c, [0, 1, 1, 5, 99], convert=lambda f: f.pts) == [0, 1024, 1024, 5120]


def test_missing_and_corrupt_name_the_path(video_files):
    with pytest.raises(FileNotFoundError, match="does_not_exist.mp4"):
        V.video_info(video_files["missing"])
    for bad in ("corrupt", "truncated"):
        with pytest.raises(V.VideoError, match=os.path.basename(video_files[bad])):
            V.video_info(video_files[bad])
    with pytest.raises(V.VideoError, match="directory"):
        V.video_info(os.path.dirname(video_files["motion"]))


def test_containers_are_closed(video_files):
    paths = [video_files[n] for n in ("motion", "audio", "vfr", "webm")]
    proc = psutil.Process()
    before = proc.num_fds()
    for p in paths:
        V.video_info(p)
        V.extract_frames_uniformly(p, 3)
        V.extract_key_frames(p)
        V.extract_frames_by_second(p, 1)
    with pytest.raises(RuntimeError):
        with V.open_video(paths[0]):
            raise RuntimeError("boom")
    for bad in ("corrupt", "truncated"):
        with pytest.raises(V.VideoError):
            V.extract_key_frames(video_files[bad])
    assert proc.num_fds() == before


def test_cut_video_is_a_stream_copy(video_files, tmp_path):
    out = V.cut_video(video_files["long"], str(tmp_path / "clip.mp4"), 2.0, 4.0)
    info = V.video_info(out)
    assert (info["duration"], info["frames"], info["width"]) == (2.0, 20, 64)
    # no temporary files left beside it
    assert os.listdir(tmp_path) == ["clip.mp4"]
    tail = V.cut_video(video_files["long"], str(tmp_path / "tail.mp4"), 4.0, None)
    assert V.video_info(tail)["frames"] == 10


def test_cut_video_error_names_the_file(video_files, tmp_path):
    with pytest.raises(V.VideoError, match="corrupt.mp4"):
        V.cut_video(video_files["corrupt"], str(tmp_path / "x.mp4"), 0.0, 1.0)
    assert os.listdir(tmp_path) == []


class _Op:
    video_key = "videos"


def test_row_frames_and_infos_are_shared_through_the_context(video_files, monkeypatch):
    p = video_files["motion"]
    samples = {"videos": [[p, p]], Fields.context: [{}]}
    frames = V.load_row_video_frames(_Op(), samples, 0, "uniform", 3)
    infos = V.load_row_video_infos(_Op(), samples, 0)
    assert list(frames) == [p] and len(frames[p]) == 3 and infos[p]["frames"] == 20

    def no_open(*a, **k):
        raise AssertionError("decoded again")

    monkeypatch.setattr(V, "open_video", no_open)
    monkeypatch.setattr(V, "video_info", no_open)
    again = V.load_row_video_frames(_Op(), samples, 0, "uniform", 3)
    assert again[p] is frames[p]
    assert V.load_row_video_infos(_Op(), samples, 0)[p] is infos[p]
    # another sampling is another context entry
    with pytest.raises(AssertionError, match="decoded again"):
        V.load_row_video_frames(_Op(), samples, 0, "all_keyframes")


def test_row_frames_without_context_and_bad_method(video_files):
    samples = {"videos": [[video_files["motion"]], []]}
    assert len(V.load_row_video_frames(_Op(), samples, 0, "all_keyframes")[video_files["motion"]]) == 4
    assert V.load_row_video_frames(_Op(), samples, 1, "uniform", 3) == {}
    with pytest.raises(ValueError, match="frame_sampling_method"):
        V.load_row_video_frames(_Op(), samples, 0, "every_other")


def test_decode_skipping_unneeded_frames_gives_the_same_frames(video_files, tmp_path):
    import subprocess

    import numpy as np

    # x264 with B-frames (the fixture videos have none): 40 frames, key frame every 20
    bframes = str(tmp_path / "bframes.mp4")
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-f", "lavfi", "-i",
                    "testsrc2=size=64x48:rate=10", "-frames:v", "40", "-c:v", "libx264", "-bf", "3",
                    "-g", "20", "-pix_fmt", "yuv420p", bframes], check=True, capture_output=True)
    conv = lambda f: f.to_ndarray(format="bgr24")  # noqa: E731
    for path in (bframes, video_files["motion"], video_files["vfr"], video_files["webm"], video_files["long"]):
        with V.open_video(path) as c:
            n = len(V.frame_table(c, path)[0])
            idx = [0, 1] + list(range(5, n + 10, 5))
            full = V.decode_frames_by_index(c, idx, conv, path)
            fast = V.decode_frames_by_index(c, idx, conv, path, skip_unneeded=True)
        assert len(fast) == len(full) == len([i for i in idx if i < n])
        assert all(np.array_equal(a, b) for a, b in zip(full, fast)), path
    with V.open_video(bframes) as c:
        pict = [int(f.pict_type) for f in c.decode(video=0)]
    assert 3 in pict  # AV_PICTURE_TYPE_B: the skipping path really had non-reference frames to skip
