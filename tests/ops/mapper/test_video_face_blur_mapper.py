"""video_face_blur_mapper: generated clips (no faces) and, in the slow tests, a clip of skimage's
astronaut photo (256x256, one face found at x 87, y 32, 51x51)."""

import os
import subprocess

import av
import numpy as np
import psutil
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.media.video import video_info
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.testdata import real_testdata  # noqa: F401
from tests.media.video_files import video_files  # noqa: F401

NAME = "video_face_blur_mapper"


def make(**kw):
    return OPERATORS.get(NAME)(**kw)


def frames(path):
    with av.open(path) as c:
        return [f.to_ndarray(format="rgb24").astype(int) for f in c.decode(video=0)]


def test_no_face_keeps_the_video_and_writes_nothing(video_files, tmp_path):
    rows = [{"videos": [video_files["motion"], video_files["motion"]]}, {"videos": []}]
    out = run_ops_on_rows([make(save_dir=str(tmp_path))], rows)
    assert out[0]["videos"] == [video_files["motion"]] * 2
    assert out[0][Fields.source_file] == [video_files["motion"]] * 2
    assert out[1][Fields.source_file] == []
    assert os.listdir(tmp_path) == []


def test_params():
    with pytest.raises(ValueError, match="blur_type"):
        make(blur_type="x")
    with pytest.raises(ValueError, match="radius"):
        make(radius=-1)
    with pytest.raises(FileNotFoundError, match="no_such_cascade.xml"):
        make(cv_classifier="no_such_cascade.xml")
    assert make(minNeighbors=5, minSize=(10, 10)).detect_kwargs == {"scaleFactor": 1.1, "minNeighbors": 5,
                                                                    "minSize": (10, 10)}


@pytest.mark.parametrize("bad", ["missing", "corrupt", "truncated"])
def test_bad_video_fails_the_sample_naming_it(video_files, bad, tmp_path):
    before = psutil.Process().num_fds()
    with pytest.raises(RuntimeError, match=os.path.basename(video_files[bad])):
        run_ops_on_rows([make(save_dir=str(tmp_path), skip_op_error=False)], [{"videos": [video_files[bad]]}])
    assert psutil.Process().num_fds() == before
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_face_blurred_in_every_frame_only_there(real_testdata, tmp_path):
    # lossless FFV1 source: outside the face only the RGB<->YUV round trip differs
    path = os.path.join(tmp_path, "astronaut.mkv")
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-loop", "1", "-i",
                    f"{real_testdata}/image/skimage/astronaut.png", "-t", "0.5", "-r", "10", "-vf",
                    "scale=256:256", "-c:v", "ffv1", "-pix_fmt", "yuv420p", path], check=True)
    out_dir = tmp_path / "out"
    out = run_ops_on_rows([make(save_dir=str(out_dir), radius=4)], [{"videos": [path]}])
    new = out[0]["videos"][0]
    assert new != path and os.path.dirname(new) == str(out_dir) and new.endswith(".mkv")
    assert out[0][Fields.source_file] == [path]
    a, b = frames(path), frames(new)
    assert len(a) == len(b) == 5
    for fa, fb in zip(a, b):
        d = np.abs(fa - fb).sum(axis=2)
        ys, xs = np.nonzero(d > 30)
        assert (ys.min(), ys.max(), xs.min(), xs.max()) == (32, 82, 87, 137)  # the face box
        assert (d > 30).sum() > 1500
        outside = d.copy()
        outside[32:83, 87:138] = 0
        assert outside.max() <= 30
    info = video_info(new)
    assert (info["width"], info["height"], info["fps"], info["duration"]) == (256, 256, 10.0, 0.5)
    assert os.listdir(out_dir) == [os.path.basename(new)]  # no temporary file left
    again = run_ops_on_rows([make(save_dir=str(out_dir), radius=4)], [{"videos": [path]}])
    assert again[0]["videos"] == [new]
    other = run_ops_on_rows([make(save_dir=str(out_dir), radius=3)], [{"videos": [path]}])
    assert other[0]["videos"] != [new]


@pytest.mark.slow
def test_h264_with_audio_keeps_audio_and_frame_count(real_testdata, tmp_path):
    path = os.path.join(tmp_path, "astronaut.mp4")
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-loop", "1", "-i",
                    f"{real_testdata}/image/skimage/astronaut.png", "-f", "lavfi", "-i",
                    "sine=frequency=440:sample_rate=16000", "-t", "0.5", "-r", "10", "-vf", "scale=256:256",
                    "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
                    path], check=True)
    new = run_ops_on_rows([make(save_dir=str(tmp_path / "o"))], [{"videos": [path]}])[0]["videos"][0]
    assert new != path
    info = video_info(new)
    assert (info["frames"], info["has_audio"], info["duration"]) == (5, True, 0.5)
    with av.open(new) as c:
        assert c.streams.video[0].codec_context.name == "h264"
        assert sum(1 for _ in c.decode(audio=0)) > 0


def test_end_to_end_bad_videos_go_to_the_ledger(video_files, tmp_path, make_recipe):
    import json

    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    rows = [{"id": "a", "text": "<__dj__video> x", "videos": [video_files["motion"]]},
            {"id": "gone", "text": "<__dj__video> x", "videos": [video_files["missing"]]},
            {"id": "junk", "text": "<__dj__video> x", "videos": [video_files["corrupt"]]}]
    recipe = make_recipe(rows, [{"video_face_blur_mapper": {"save_dir": str(tmp_path / "o")}}])
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = read_jsonl(out / "result.jsonl")
    assert [r["id"] for r in res] == ["a"]
    assert res[0]["videos"] == [video_files["motion"]]
    job = [os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))][0]
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert sorted(e["op"] for e in errors) == ["video_face_blur_mapper"] * 2
    text = json.dumps(errors)
    assert "does_not_exist.mp4" in text and "corrupt.mp4" in text
