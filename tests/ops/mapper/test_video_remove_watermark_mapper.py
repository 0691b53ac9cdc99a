"""video_remove_watermark_mapper on a generated lossless clip: seeded noise (0..99) in every
frame with a static white 8x6 box at x 20..27, y 10..15 (the watermark)."""

import os

import av
import numpy as np
import psutil
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.media.video import video_info
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401

NAME = "video_remove_watermark_mapper"
BOX = (slice(10, 16), slice(20, 28))
DILATED = (slice(8, 18), slice(18, 30))  # the box grown by the 5x5 dilation


def make(**kw):
    return OPERATORS.get(NAME)(**kw)


@pytest.fixture(scope="module")
def marked(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("wm") / "marked.mkv")
    rng = np.random.default_rng(0)
    with av.open(path, "w") as c:
        s = c.add_stream("ffv1", rate=10)
        s.width, s.height, s.pix_fmt = 64, 48, "yuv444p"
        for _ in range(10):
            img = rng.integers(0, 100, (48, 64, 3), dtype=np.uint8)
            img[BOX] = 255
            c.mux(s.encode(av.VideoFrame.from_ndarray(img, format="bgr24")))
        c.mux(s.encode())
    return path


def frames(path):
    with av.open(path) as c:
        return [f.to_ndarray(format="bgr24").astype(int) for f in c.decode(video=0)]


@pytest.mark.parametrize("kw", [dict(roi_strings=["0,0,0.5,0.5"]),
                                dict(roi_strings=["(0, 0, 32, 24)"], roi_type="pixel",
                                     detection_method="pixel_diversity")])
def test_mask_is_the_dilated_box(marked, kw):
    op = make(**kw)
    mask = op.watermark_mask(marked, op.rois)
    assert mask.shape == (48, 64) and int(mask.sum()) // 255 == 120
    assert (mask[DILATED] == 255).all()


def test_watermark_inpainted_in_every_frame_rest_kept(marked, tmp_path):
    out = run_ops_on_rows([make(roi_strings=["0,0,0.5,0.5"], save_dir=str(tmp_path))], [{"videos": [marked]}])
    new = out[0]["videos"][0]
    assert new != marked and new.endswith(".mkv") and out[0][Fields.source_file] == [marked]
    a, b = frames(marked), frames(new)
    assert len(a) == len(b) == 10
    for fa, fb in zip(a, b):
        assert fa[BOX].min() >= 250 and fb[BOX].mean() < 120  # white box gone (noise is 0..99)
        outside = np.abs(fa - fb)
        outside[DILATED] = 0
        assert outside.max() <= 3  # only the YUV round trip outside the mask
    assert os.listdir(tmp_path) == [os.path.basename(new)]
    assert run_ops_on_rows([make(roi_strings=["0,0,0.5,0.5"], save_dir=str(tmp_path))],
                           [{"videos": [marked]}])[0]["videos"] == [new]


def test_roi_key_per_sample_and_default_roi(marked, tmp_path):
    op = make(roi_key="rois", roi_type="ratio", save_dir=str(tmp_path))
    rows = [{"videos": [marked], "rois": "[0.25, 0.125, 0.5, 0.375]"}, {"videos": [marked], "rois": ["bad"]},
            {"videos": []}]
    out = run_ops_on_rows([op], rows)
    a, b = frames(marked)[0], frames(out[0]["videos"][0])[0]
    assert b[BOX].mean() < 120
    c = frames(out[1]["videos"][0])[0]  # no usable roi: nothing inpainted
    assert np.abs(a - c).max() <= 3
    assert out[0]["videos"] != out[1]["videos"] and out[2][Fields.source_file] == []
    # default roi (top-left 10%: 6x4 px) misses the box
    d = frames(run_ops_on_rows([make(save_dir=str(tmp_path / "d"))], [{"videos": [marked]}])[0]["videos"][0])[0]
    assert d[BOX].min() >= 250


def test_h264_keeps_size_rate_and_frame_count(video_files, tmp_path):
    out = run_ops_on_rows([make(save_dir=str(tmp_path))], [{"videos": [video_files["audio"]]}])
    info = video_info(out[0]["videos"][0])
    assert (info["width"], info["height"], info["fps"], info["frames"], info["has_audio"]) == \
        (64, 48, 10.0, 20, True)


def test_params():
    with pytest.raises(ValueError, match="roi_type"):
        make(roi_type="px")
    with pytest.raises(ValueError, match="detection_method"):
        make(detection_method="edges")
    with pytest.raises(ValueError, match="frame_num"):
        make(detection_method="pixel_diversity", frame_num=1)
    with pytest.raises(ValueError, match="'1,2,3'"):
        make(roi_strings=["1,2,3"])
    assert make(roi_strings=["[0, 0, 2, 0.5]"]).rois == [(0.0, 0.0, 1.0, 0.5)]


@pytest.mark.parametrize("bad", ["missing", "corrupt"])
def test_bad_video_fails_the_sample_naming_it(video_files, bad, tmp_path):
    before = psutil.Process().num_fds()
    with pytest.raises(RuntimeError, match=os.path.basename(video_files[bad])):
        run_ops_on_rows([make(save_dir=str(tmp_path), skip_op_error=False)], [{"videos": [video_files[bad]]}])
    assert psutil.Process().num_fds() == before
    assert os.listdir(tmp_path) == []


def test_end_to_end_bad_videos_go_to_the_ledger(video_files, tmp_path, make_recipe):
    import json

    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    rows = [{"id": "a", "text": "<__dj__video> x", "videos": [video_files["motion"]]},
            {"id": "gone", "text": "<__dj__video> x", "videos": [video_files["missing"]]},
            {"id": "junk", "text": "<__dj__video> x", "videos": [video_files["corrupt"]]}]
    recipe = make_recipe(rows, [{"video_remove_watermark_mapper": {"save_dir": str(tmp_path / "o")}}])
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = read_jsonl(out / "result.jsonl")
    assert [r["id"] for r in res] == ["a"]
    assert res[0]["videos"][0].startswith(str(tmp_path / "o")) and os.path.exists(res[0]["videos"][0])
    job = [os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))][0]
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert sorted(e["op"] for e in errors) == ["video_remove_watermark_mapper"] * 2
    text = json.dumps(errors)
    assert "does_not_exist.mp4" in text and "corrupt.mp4" in text
