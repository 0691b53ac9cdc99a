"""video_extract_frames_mapper: the JPEG bytes equal Data-Juicer 1.6.1's on the same files
(MD5 prefixes below are of its output)."""

import hashlib
import os

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from tests.media.video_files import video_files  # noqa: F401

TEXT = "<__dj__video> a <|__dj__eoc|> <__dj__video>"


def run(video_files, **kw):
    rows = [{"text": TEXT, "videos": [video_files["long"], video_files["vfr"]]}]
    return run_ops_on_rows([OPERATORS.get("video_extract_frames_mapper")(**kw)], rows)[0]["video_frames"]


@pytest.mark.parametrize("kw,counts", [
    ({}, [5, 3]),
    ({"frame_sampling_method": "uniform", "frame_num": 4}, [4, 4]),
    ({"frame_sampling_method": "all_frames"}, [50, 12]),
])
def test_frame_counts_and_bytes_equal_data_juicer(video_files, kw, counts):
    frames = run(video_files, output_format="bytes", **kw)
    assert [len(f) for f in frames] == counts
    assert all(b[:2] == b"\xff\xd8" for f in frames for b in f)  # JPEG


def test_uniform_bytes_match_data_juicer(video_files):
    frames = run(video_files, output_format="bytes", frame_sampling_method="uniform", frame_num=4)
    digest = [[hashlib.md5(b).hexdigest()[:8] for b in f] for f in frames]
    assert digest == [["1df0dcbe", "e63d6571", "561dbdc0", "f16ddc42"],  # Data-Juicer 1.6.1's output
                      ["1df0dcbe", "573deb80", "9a674fee", "9f6ad05f"]]
    ref = run(video_files, output_format="bytes", frame_sampling_method="all_frames")
    # the 4 uniform frames of the 5 s clip are frames 0, 17, 34 (t = 0, 5/3, 10/3 s) and the last
    assert digest[0] == [hashlib.md5(ref[0][i]).hexdigest()[:8] for i in (0, 17, 34, 49)]


def test_paths_are_stable_and_written(video_files, tmp_path):
    a = run(video_files, frame_dir=str(tmp_path))
    b = run(video_files, frame_dir=str(tmp_path))
    assert a == b and [len(x) for x in a] == [5, 3]
    assert all(os.path.exists(p) and p.endswith(f"frame_{i}.jpg") for x in a for i, p in enumerate(x))
    assert len(os.listdir(tmp_path)) == 2 and not any(n.startswith(".tmp") for n in os.listdir(
        os.path.dirname(a[0][0])))


def test_legacy_tokens_and_existing_frames(video_files):
    rows = [{"text": "<__dj__video> only one", "videos": [video_files["long"], video_files["vfr"]]},
            {"text": "x", "videos": [video_files["long"]], "video_frames": [["already"]]},
            {"text": "none", "videos": []}]
    op = OPERATORS.get("video_extract_frames_mapper")(output_format="bytes")
    out = run_ops_on_rows([op], rows)
    assert [len(f) for f in out[0]["video_frames"]] == [5, 0]
    assert out[1]["video_frames"] == [["already"]] and out[2]["video_frames"] == []


def test_params_checked():
    with pytest.raises(ValueError, match="frame_dir"):
        OPERATORS.get("video_extract_frames_mapper")()
    with pytest.raises(ValueError, match="frame_sampling_method"):
        OPERATORS.get("video_extract_frames_mapper")(frame_sampling_method="some", output_format="bytes")
