import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "image_pair_similarity_filter"
MODEL = "openai/clip-vit-base-patch32"


def test_score_range_is_validated(no_models):
    from data_juicer.config.recipe import validate_op

    with pytest.raises(Exception, match="min_score"):
        validate_op(NAME, OPERATORS.get(NAME), {"min_score": 1.5}, "process[0]")


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/{MODEL}" in str(e.value)


@pytest.mark.slow
def test_cosine_of_the_two_images(models_env, tmp_path):
    import torch
    from PIL import Image
    from transformers import CLIPModel, CLIPProcessor

    root = models_env(MODEL)
    imgs = write_images(tmp_path, 3)
    op = OPERATORS.get(NAME)(min_score=0.7)
    samples = {"images": [imgs[:2], imgs[1:]], Fields.stats: [{}, {}]}
    samples, keep = op.decide_batch(samples)
    got = [s["image_pair_similarity"] for s in samples[Fields.stats]]
    assert got[0] == pytest.approx([0.65398818], abs=1e-6)
    # Data-Juicer: get_image_features of each image, torch.cosine_similarity
    model = CLIPModel.from_pretrained(f"{root}/{MODEL}").eval()
    px = CLIPProcessor.from_pretrained(f"{root}/{MODEL}", backend="pil").image_processor(
        [Image.open(p).convert("RGB") for p in imgs[1:]], return_tensors="pt")["pixel_values"]
    with torch.no_grad():
        f = [model.get_image_features(px[k:k + 1]).pooler_output for k in (0, 1)]
    assert got[1][0] == pytest.approx(torch.cosine_similarity(f[0], f[1], dim=1).item(), abs=1e-6)
    assert keep == [False, got[1][0] >= 0.7]


@pytest.mark.slow
def test_a_sample_without_two_images_fails_clearly(models_env, tmp_path):
    models_env(MODEL)
    imgs = write_images(tmp_path, 1)
    op = OPERATORS.get(NAME)()
    with pytest.raises(ValueError, match="two different images"):
        op.decide_batch({"images": [[imgs[0], imgs[0]]], Fields.stats: [{}]})
