"""video_resize_aspect_ratio_mapper, video_resize_resolution_mapper, video_ffmpeg_wrapped_mapper.

Expected (width, height, frames, bytes) of each written video are Data-Juicer 1.6.1's, from its
ops run on the same generated files (the bytes are equal too)."""

import os

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.media.video import video_info
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401


def run(name, video_files, tmp_path, **kw):
    rows = [{"text": "a", "videos": [video_files["wide"], video_files["motion"]]}, {"text": "b", "videos": []}]
    out = run_ops_on_rows([OPERATORS.get(name)(save_dir=str(tmp_path), **kw)], rows)
    assert out[1]["videos"] == [] and out[1][Fields.source_file] == []
    assert out[0][Fields.source_file] == [video_files["wide"], video_files["motion"]]
    return out[0]["videos"], [(video_info(p)["width"], video_info(p)["height"], video_info(p)["frames"],
                               os.path.getsize(p)) for p in out[0]["videos"]]


@pytest.mark.parametrize("name,kw,expected", [
    ("video_resize_aspect_ratio_mapper", {}, (128, 56, 10, 5563)),
    ("video_resize_aspect_ratio_mapper", {"strategy": "decrease"}, (74, 32, 10, 3458)),
    ("video_resize_resolution_mapper", {"max_width": 100}, (100, 26, 10, 3891)),
    ("video_resize_resolution_mapper", {"min_height": 40, "force_original_aspect_ratio": "increase",
                                        "force_divisible_by": 4}, (160, 40, 10, 5309)),
])
def test_resize_equals_data_juicer(video_files, tmp_path, name, kw, expected):
    paths, desc = run(name, video_files, tmp_path, **kw)
    assert desc[0] == expected
    assert paths[1] == video_files["motion"]  # already inside: untouched, no file written
    assert os.path.dirname(paths[0]) == str(tmp_path) and "__dj_hash_#" in paths[0]
    assert os.listdir(tmp_path) == [os.path.basename(paths[0])]


def test_ffmpeg_wrapped_equals_data_juicer(video_files, tmp_path):
    paths, desc = run("video_ffmpeg_wrapped_mapper", video_files, tmp_path, filter_name="scale",
                      filter_kwargs={"width": 32, "height": -2})
    assert desc == [(32, 8, 10, 2045), (32, 24, 20, 2746)]
    again, _ = run("video_ffmpeg_wrapped_mapper", video_files, tmp_path, filter_name="scale",
                   filter_kwargs={"width": 32, "height": -2})
    assert again == paths


def test_ffmpeg_wrapped_without_filter_passes(video_files, tmp_path):
    paths, _ = run("video_ffmpeg_wrapped_mapper", video_files, tmp_path)
    assert paths == [video_files["wide"], video_files["motion"]]


def test_ffmpeg_error_names_file(video_files, tmp_path):
    op = OPERATORS.get("video_ffmpeg_wrapped_mapper")(filter_name="no_such_filter", save_dir=str(tmp_path),
                                                     skip_op_error=False)
    with pytest.raises(RuntimeError, match="motion.mp4"):
        run_ops_on_rows([op], [{"text": "a", "videos": [video_files["motion"]]}])
    assert os.listdir(tmp_path) == []


def test_params_checked():
    with pytest.raises(ValueError, match="strategy"):
        OPERATORS.get("video_resize_aspect_ratio_mapper")(strategy="grow")
    with pytest.raises(ValueError, match="force_divisible_by"):
        OPERATORS.get("video_resize_resolution_mapper")(force_original_aspect_ratio="increase",
                                                        force_divisible_by=3)


def test_resolution_target_size_arithmetic():
    op = OPERATORS.get("video_resize_resolution_mapper")(min_width=641)
    assert op.target_size(640, 360) == (642, 360)  # width to 641 -> even 642; height 360.56 -> 360
    assert op.target_size(700, 360) is None
