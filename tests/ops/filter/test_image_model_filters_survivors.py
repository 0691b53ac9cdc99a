"""A model filter after another one scores only the rows the earlier one kept (Data-Juicer runs
filter by filter, so its later filters see only survivors: ours must not do more inference),
fused (``op_fusion: true``, ``fusion_strategy: greedy``) or not. (With the default
``fusion_strategy: probe`` the adapter's probe also runs each op on the probe batch.)"""

import pytest

from tests.models.vision_tiny_models import vision_models, write_images  # noqa: F401

NSFW = "Falconsai/nsfw_image_detection"
WM = "amrul-hzz/watermark_detector"


@pytest.mark.slow
@pytest.mark.parametrize("fusion", [False, True], ids=["sequential", "fused"])
def test_later_model_filter_scores_only_survivors(vision_models, make_recipe, tmp_path, monkeypatch, fusion):
    from data_juicer.cli.process import main
    from data_juicer.ops.filter.image_watermark_filter import ImageWatermarkFilter
    from tests.conftest import read_jsonl

    root = vision_models.need(NSFW, WM)
    # the seeded tiny NSFW model scores these two images 0.2053 and 0.1787 (see test_image_nsfw_filter)
    imgs = write_images(tmp_path / "imgs", 2)
    rows = [{"id": "s0", "text": "x", "images": [imgs[0]]}, {"id": "s1", "text": "x", "images": [imgs[1]]}]
    scored = []
    real = ImageWatermarkFilter.score_images

    def counting(self, images):
        scored.append(len(images))
        return real(self, images)

    monkeypatch.setattr(ImageWatermarkFilter, "score_images", counting)
    recipe = make_recipe(rows, [
        {"image_nsfw_filter": {"hf_nsfw_model": f"{root}/{NSFW}", "max_score": 0.19}},
        {"image_watermark_filter": {"hf_watermark_model": f"{root}/{WM}", "prob_threshold": 1.0}},
    ], op_fusion=fusion, fusion_strategy="greedy")
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["id"] for r in out] == ["s1"]
    assert scored == [1]  # s0, dropped by the NSFW filter, never reaches the watermark model
