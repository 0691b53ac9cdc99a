import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.vision_tiny_models import models_env, no_models, vision_models  # noqa: F401

NAME = "video_frames_text_similarity_filter"
MODEL = "openai/clip-vit-base-patch32"
VID, EOC = "<__dj__video>", "<|__dj__eoc|>"


def test_bad_params_are_rejected(no_models):
    with pytest.raises(ValueError, match=r"Keep strategy \[both\]"):
        OPERATORS.get(NAME)(any_or_all="both")


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/{MODEL}" in str(e.value)


@pytest.mark.slow
def test_chunk_similarity_over_all_frames_of_its_videos(models_env, video_files):
    import torch
    from transformers import CLIPModel, CLIPProcessor

    from data_juicer.media.video import extract_key_frames

    root = models_env(MODEL)
    a, b = video_files["motion"], video_files["scenes"]
    op = OPERATORS.get(NAME)(min_score=-1.0)
    samples = {"videos": [[a, b]], "text": [f"{VID} a cat {EOC}{VID} the red dog"], Fields.stats: [{}]}
    samples, keep = op.decide_batch(samples)
    got = samples[Fields.stats][0]["video_frames_text_similarity"]
    model = CLIPModel.from_pretrained(f"{root}/{MODEL}").eval()
    proc = CLIPProcessor.from_pretrained(f"{root}/{MODEL}", backend="pil")
    ref = []
    with torch.no_grad():
        for text, v in (("a cat", a), ("the red dog", b)):
            inputs = proc(text=text, images=extract_key_frames(v), return_tensors="pt", truncation=True,
                          max_length=16, padding=True)
            ref.append((model(**inputs).logits_per_text / 100.0).mean().item())
    assert got == pytest.approx(ref, abs=1e-6)
    assert keep == [True]
