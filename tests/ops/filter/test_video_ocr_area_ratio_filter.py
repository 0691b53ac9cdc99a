import numpy as np
import pytest

from data_juicer.models.loader import clear_models
from data_juicer.ops.filter.video_ocr_area_ratio_filter import text_area_ratio
from data_juicer.utils.constant import Fields, StatsKeys
from tests.ops.vision_other_helpers import dry_run, write_video

OP = "video_ocr_area_ratio_filter"


def _op(**kw):
    from data_juicer.ops.registry import OPERATORS

    return OPERATORS.get(OP)(**kw)


def test_missing_model_names_every_path(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("EASYOCR_MODULE_PATH", str(tmp_path / "eo"))
    with pytest.raises(FileNotFoundError) as e:
        _op()
    msg = str(e.value)
    assert str(tmp_path / "m" / "craft_mlt_25k.pth") in msg and str(tmp_path / "eo" / "model" / "craft_mlt_25k.pth") in msg


def test_missing_model_under_dry_run(tmp_path, monkeypatch, make_recipe, capsys):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("EASYOCR_MODULE_PATH", str(tmp_path / "eo"))
    rc, out = dry_run(make_recipe, [{OP: {}}], capsys=capsys)
    assert rc != 0 and str(tmp_path / "m" / "craft_mlt_25k.pth") in out


def test_params_and_no_video(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    (tmp_path / "craft_mlt_25k.pth").write_bytes(b"x")
    op = _op(languages_to_detect="en")
    assert op.languages_to_detect == ["en"] and op.frame_sample_num == 3 and op.any
    assert _op().languages_to_detect == ["ch_sim", "en"]
    with pytest.raises(ValueError, match="Keep strategy"):
        _op(any_or_all="most")
    batch = {"videos": [[]], Fields.stats: [{}]}
    assert op.compute_stats_batched(batch)[Fields.stats][0][StatsKeys.video_ocr_area_ratio] == []
    assert op.process_batched(batch) == [True]


def test_text_area_ratio_as_data_juicer():
    # a 10x5 rectangle, an inverted one (skipped), and a 4x4 square given as 4 points, on a 20x10 frame
    horizontal = [[0, 10, 0, 5], [5, 1, 0, 5]]
    free = [[[0, 0], [4, 0], [4, 4], [0, 4]]]
    assert text_area_ratio(horizontal, free, 20, 10) == pytest.approx((50 + 16) / 200)


@pytest.mark.slow
def test_tiny_craft_whole_frame_text(tmp_path, monkeypatch):
    from tests.models.tiny_other_models import build_craft

    build_craft(str(tmp_path / "models"))
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    v = write_video(str(tmp_path / "v.mp4"), frames=4, w=64, h=48)
    clear_models()
    op = _op(frame_sample_num=2, max_area_ratio=1.0)
    out = op.compute_stats_batched({"videos": [[v, v]], Fields.stats: [{}]})
    ratios = out[Fields.stats][0][StatsKeys.video_ocr_area_ratio]
    # the detector sees text everywhere: one box [-6, 68] x [-6, 68] (padded canvas + EasyOCR's
    # margin) on a 64x48 frame, so the ratio exceeds 1 as in Data-Juicer
    assert ratios == pytest.approx([74 * 74 / (64 * 48)] * 2)
    assert op.process_batched(out) == [False]
    assert _op(max_area_ratio=2.0).process_batched(out) == [True]
    # Data-Juicer's call: Reader.detect on each frame alone
    from data_juicer.media.video import extract_frames_uniformly
    from data_juicer.models.vision_other import load_easyocr_detector

    reader = load_easyocr_detector(["ch_sim", "en"], "cpu", who=OP)
    frames = extract_frames_uniformly(v, 2)
    alone = [text_area_ratio(*(lst[0] for lst in reader.detect(np.asarray(f))), f.width, f.height) for f in frames]
    assert ratios[0] == pytest.approx(float(np.mean(alone)))
    clear_models()
