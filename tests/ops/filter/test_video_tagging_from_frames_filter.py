import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.ops.mapper.test_image_tagging_mapper import WEIGHTS, ram  # noqa: F401

NAME = "video_tagging_from_frames_filter"


def test_bad_params_and_missing_weights(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    with pytest.raises(ValueError, match=r"containing type \[some\]"):
        OPERATORS.get(NAME)(contain="some")
    with pytest.raises(ValueError, match=r"Keep strategy \[both\]"):
        OPERATORS.get(NAME)(any_or_all="both")
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert str(tmp_path / "m" / WEIGHTS) in str(e.value)


def _run(op, video_files):
    rows = {"text": ["a", "b", "c"], "videos": [[video_files["scenes"]], [video_files["static"]], []],
            Fields.meta: [{}, {}, {}], Fields.stats: [{}, {}, {}]}
    rows = op.compute_stats_batched(rows)
    return rows, op.process_batched(rows)


def test_keeps_videos_with_any_or_all_tags(ram, video_files):
    rows, keep = _run(OPERATORS.get(NAME)(tags=["Red"], frame_sampling_method="uniform"), video_files)
    assert [m["video_frame_tags"] for m in rows[Fields.meta]] == [
        [["dark", "thing", "red", "blue"]], [["red", "bright", "thing"]], [[]]]
    assert keep == [True, True, False]  # no video: [[]], which holds no tag (as Data-Juicer)
    _, keep = _run(OPERATORS.get(NAME)(tags=["red", "blue"], contain="all", frame_sampling_method="uniform"),
                   video_files)
    assert keep == [True, False, False]
    _, keep = _run(OPERATORS.get(NAME)(tags=[], contain="all", frame_sampling_method="uniform"), video_files)
    assert keep == [True, True, True]
