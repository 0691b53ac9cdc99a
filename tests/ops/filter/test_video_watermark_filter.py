import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.vision_tiny_models import models_env, no_models, vision_models  # noqa: F401

NAME = "video_watermark_filter"
MODEL = "amrul-hzz/watermark_detector"


def test_bad_params_are_rejected(no_models):
    with pytest.raises(ValueError, match=r"Frame sampling method \[random\]"):
        OPERATORS.get(NAME)(frame_sampling_method="random")


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/{MODEL}" in str(e.value)


@pytest.mark.slow
def test_uniform_frames_mean_probability(models_env, video_files):
    import torch
    from transformers import AutoImageProcessor, ViTForImageClassification

    from data_juicer.media.video import extract_frames_uniformly

    root = models_env(MODEL)
    v = video_files["motion"]
    op = OPERATORS.get(NAME)(frame_sampling_method="uniform", frame_num=3, prob_threshold=0.75)
    samples, keep = op.decide_batch({"videos": [[v, v]], Fields.stats: [{}]})
    got = samples[Fields.stats][0]["video_watermark_prob"]
    assert len(got) == 1  # one value per distinct video
    model = ViTForImageClassification.from_pretrained(f"{root}/{MODEL}").eval()
    proc = AutoImageProcessor.from_pretrained(f"{root}/{MODEL}", backend="pil")
    with torch.no_grad():
        probs = torch.softmax(model(**proc(images=extract_frames_uniformly(v, 3), return_tensors="pt")).logits, -1)
    assert got[0] == pytest.approx(probs[:, 1].mean().item(), abs=1e-6)
    assert keep == [got[0] <= 0.75]
