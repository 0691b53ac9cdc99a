import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "image_watermark_filter"
MODEL = "amrul-hzz/watermark_detector"


def test_bad_strategy_is_rejected(no_models):
    with pytest.raises(ValueError, match=r"Keep strategy \[none\] is not supported"):
        OPERATORS.get(NAME)(any_or_all="none")


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/{MODEL}" in str(e.value) and "needed by image_watermark_filter" in str(e.value)
    with pytest.raises(FileNotFoundError, match="other/model"):
        OPERATORS.get(NAME).check_models({"hf_watermark_model": "other/model"})


def test_decision_uses_prob_threshold_only():
    op = OPERATORS.get(NAME).__new__(OPERATORS.get(NAME))
    op.min_closed_interval = op.max_closed_interval = True
    op.reversed_range = False
    op.prob_threshold, op.any = 0.5, True
    samples = {Fields.stats: [{"image_watermark_prob": [0.7, 0.4]}, {"image_watermark_prob": [0.9]},
                              {"image_watermark_prob": []}, {"image_watermark_prob": [0.5]}]}
    assert op.process_batched(samples) == [True, False, True, True]
    op.any = False
    assert op.process_batched(samples) == [False, False, True, True]


@pytest.mark.slow
def test_probabilities_of_the_tiny_model(models_env, tmp_path):
    models_env(MODEL)
    imgs = write_images(tmp_path, 3)
    op = OPERATORS.get(NAME)(prob_threshold=0.75)
    samples = {"images": [imgs[:2], imgs[2:]], Fields.stats: [{}, {}]}
    samples, keep = op.decide_batch(samples)
    got = [s["image_watermark_prob"] for s in samples[Fields.stats]]
    assert got[0] == pytest.approx([0.70814437, 0.74696976], abs=1e-6)
    assert len(got[1]) == 1 and keep == [True, got[1][0] <= 0.75]
