import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.vision_tiny_models import models_env, no_models, vision_models  # noqa: F401

NAME = "video_aesthetics_filter"
MODEL = "shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE"


def test_bad_params_are_rejected(no_models):
    with pytest.raises(ValueError, match=r"Reduce mode \[mean\]"):
        OPERATORS.get(NAME)(reduce_mode="mean")


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/{MODEL}" in str(e.value)


@pytest.mark.slow
def test_uniform_frames_min_score(models_env, video_files):
    import torch
    from transformers import CLIPProcessor

    from data_juicer.media.video import extract_frames_uniformly
    from data_juicer.models.vision import aesthetics_class

    root = models_env(MODEL)
    v = video_files["long"]
    op = OPERATORS.get(NAME)(reduce_mode="min", min_score=0.0)
    samples, keep = op.decide_batch({"videos": [[v], []], Fields.stats: [{}, {}]})
    got = [s["video_frames_aesthetics_score"] for s in samples[Fields.stats]]
    model = aesthetics_class("v2_linear").from_pretrained(f"{root}/{MODEL}").eval()
    proc = CLIPProcessor.from_pretrained(f"{root}/{MODEL}", backend="pil")
    with torch.no_grad():
        ref = (model(**proc(images=extract_frames_uniformly(v, 3), return_tensors="pt")).logits / 10.0).min().item()
    assert got[0] == pytest.approx([ref], abs=1e-6) and got[1] == []
    assert keep == [ref >= 0.0, True]
