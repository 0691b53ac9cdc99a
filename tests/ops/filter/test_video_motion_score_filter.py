"""video_motion_score_filter: the expected scores are Data-Juicer 1.6.1's (its OpenCV
VideoCapture implementation run on the same generated files) to full float precision."""

import psutil
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401


def score(video_files, name, **kw):
    op = OPERATORS.get("video_motion_score_filter")(min_score=-10, **kw)
    out = run_ops_on_rows([op], [{"text": "x", "videos": [video_files[name]]}])
    return out[0][Fields.stats]["video_motion_score"][0]


@pytest.mark.parametrize("name,kw,expected", [
    ("motion", {}, 0.025207113299984485),
    ("static", {}, 0.0),
    ("one_frame", {}, -1.0),
    ("vfr", {}, 0.02185291878413409),
    ("short", {}, 0.008090302930213511),
    ("scenes", {}, 0.6894279175396557),
    ("wide", {}, 0.22356224060058594),
    ("motion", {"sampling_fps": 10}, 0.03455877973756287),
    ("motion", {"relative": True}, 0.00031508891624980605),
    ("portrait", {"sampling_fps": 0.5}, 0.7665117383003235),
])
def test_scores_equal_data_juicer(video_files, name, kw, expected):
    assert score(video_files, name, **kw) == pytest.approx(expected, abs=1e-9)


def test_keeps_by_range_and_strategy(video_files):
    op = OPERATORS.get("video_motion_score_filter")
    rows = [{"text": "static", "videos": [video_files["static"]]},
            {"text": "scenes", "videos": [video_files["scenes"]]},
            {"text": "both", "videos": [video_files["static"], video_files["scenes"]]},
            {"text": "none", "videos": []}]
    assert [r["text"] for r in run_ops_on_rows([op(min_score=0.25)], rows)] == ["scenes", "both", "none"]
    out = run_ops_on_rows([op(min_score=0.25, any_or_all="all")], [dict(r) for r in rows])
    assert [r["text"] for r in out] == ["scenes", "none"]


def test_resize_keeps_orientation(video_files):
    # size=32 on a 64x48 clip -> 42x32 frames (Data-Juicer would distort them to 32x42); score changes
    resized = score(video_files, "motion", size=32)
    assert resized != pytest.approx(0.025207113299984485) and resized > 0


def test_optical_flow_output(video_files):
    op = OPERATORS.get("video_motion_score_filter")(min_score=-1, if_output_optical_flow=True, sampling_fps=1)
    out = run_ops_on_rows([op], [{"text": "x", "videos": [video_files["short"]]}])
    flows = out[0][Fields.meta]["video_optical_flow"][0]
    # frames 0, 1, 2 (the step is capped at frames - 1): two flows
    assert len(flows) == 2 and len(flows[0]) == 48 and len(flows[0][0]) == 64 and len(flows[0][0][0]) == 2


def test_frame_field(video_files, tmp_path):
    from data_juicer.media import video as V

    frames = V.extract_frames_uniformly(video_files["motion"], 5)
    paths = []
    for k, f in enumerate(frames):
        paths.append(str(tmp_path / f"{k}.png"))
        f.save(paths[-1])
    op = OPERATORS.get("video_motion_score_filter")(min_score=-1, frame_field="frames")
    out = run_ops_on_rows([op], [{"text": "x", "videos": [], "frames": [paths]}])
    s = out[0][Fields.stats]["video_motion_score"]
    assert len(s) == 1 and s[0] > 0
    op2 = OPERATORS.get("video_motion_score_filter")(min_score=-1, frame_field="frames", original_fps=10,
                                                     sampling_fps=5)
    out2 = run_ops_on_rows([op2], [{"text": "x", "videos": [], "frames": [paths[:1]]}])
    assert out2[0][Fields.stats]["video_motion_score"] == [-1.0]


def test_closes_files_and_names_bad_video(video_files):
    before = psutil.Process().num_fds()
    score(video_files, "audio")
    assert psutil.Process().num_fds() == before
    op = OPERATORS.get("video_motion_score_filter")(skip_op_error=False)
    with pytest.raises(RuntimeError, match="corrupt.mp4"):
        run_ops_on_rows([op], [{"text": "x", "videos": [video_files["corrupt"]]}])
    assert psutil.Process().num_fds() == before
