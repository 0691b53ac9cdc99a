import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.ops.mapper.test_image_tagging_mapper import WEIGHTS, ram  # noqa: F401

NAME = "video_tagging_from_frames_mapper"


def test_bad_sampling_and_missing_weights(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    with pytest.raises(ValueError, match=r"Frame sampling method \[every\]"):
        OPERATORS.get(NAME)(frame_sampling_method="every")
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert str(tmp_path / "m" / WEIGHTS) in str(e.value)


def test_tags_of_all_frames_counted_per_video(ram, video_files):
    # "scenes": a red, a testsrc2 and a blue shot (uniform 3 frames: one of each); "static": flat grey
    op = OPERATORS.get(NAME)(frame_sampling_method="uniform", frame_num=3)
    rows = {"text": ["a", "b"], "videos": [[video_files["scenes"], video_files["static"]], []],
            Fields.meta: [{}, {}]}
    out = op.process_batched(rows)
    assert out[Fields.meta][0]["video_frame_tags"] == [["dark", "thing", "red", "blue"],
                                                       ["red", "bright", "thing"]]
    assert out[Fields.meta][1]["video_frame_tags"] == [[]]
    assert ram.CALLS == [6]  # every frame of the batch in one call
