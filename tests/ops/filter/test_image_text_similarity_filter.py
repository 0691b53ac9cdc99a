import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "image_text_similarity_filter"
MODEL = "openai/clip-vit-base-patch32"
IMG, EOC = "<__dj__image>", "<|__dj__eoc|>"


@pytest.mark.parametrize("params,needle", [({"reduce_mode": "median"}, "Reduce mode [median]"),
                                           ({"any_or_all": "each"}, "Keep strategy [each]")])
def test_bad_params_are_rejected(no_models, params, needle):
    with pytest.raises(ValueError) as e:
        OPERATORS.get(NAME)(**params)
    assert needle in str(e.value)


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/{MODEL}" in str(e.value)
    assert "needed by image_text_similarity_filter" in str(e.value)


def test_chunks_pair_texts_with_their_images():
    from data_juicer.ops.common.vision import text_media_chunks

    text = f"{IMG} a cat {IMG}{EOC} no image here {EOC}{IMG} the dog"
    assert text_media_chunks(text, ["a", "b", "c"], IMG) == [("a cat", ["a", "b"]), ("the dog", ["c"])]


def _dj_reference(root, text_chunk, paths, mode="avg"):
    """Data-Juicer's computation for one chunk: one processor call, logits_per_text / 100, reduced."""
    import torch
    from PIL import Image
    from transformers import CLIPModel, CLIPProcessor

    model = CLIPModel.from_pretrained(f"{root}/{MODEL}").eval()
    proc = CLIPProcessor.from_pretrained(f"{root}/{MODEL}", backend="pil")
    with torch.no_grad():
        inputs = proc(text=text_chunk, images=[Image.open(p).convert("RGB") for p in paths], return_tensors="pt",
                      truncation=True, max_length=model.config.text_config.max_position_embeddings, padding=True)
        logits = model(**inputs).logits_per_text / 100.0
    return float({"avg": logits.mean, "max": logits.max, "min": logits.min}[mode]())


@pytest.mark.slow
def test_similarity_per_chunk_equals_data_juicer(models_env, tmp_path):
    root = models_env(MODEL)
    imgs = write_images(tmp_path, 3)
    op = OPERATORS.get(NAME)(min_score=-1.0, max_score=-0.004, reduce_mode="max")
    samples = {"images": [imgs[:2], [], [imgs[1], imgs[2], imgs[2]]],
               "text": [f"{IMG} a cat {IMG} {EOC} the dog", "no image", f"{IMG} the red {EOC} {IMG}{IMG} on"],
               Fields.stats: [{}, {}, {}]}
    samples, keep = op.decide_batch(samples)
    got = [s["image_text_similarity"] for s in samples[Fields.stats]]
    assert got[0] == pytest.approx([-0.00304639], abs=1e-6)
    assert got[1] == [] and len(got[2]) == 2
    assert got[0][0] == pytest.approx(_dj_reference(root, "a cat", imgs[:2], "max"), abs=1e-6)
    assert got[2][1] == pytest.approx(_dj_reference(root, "on", [imgs[2], imgs[2]], "max"), abs=1e-6)
    assert keep == [False, True, any(v <= -0.004 for v in got[2])]


@pytest.mark.slow
def test_flip_changes_the_image_seen(models_env, tmp_path):
    models_env(MODEL)
    imgs = write_images(tmp_path, 1)
    rows = {"images": [imgs], "text": [f"{IMG} the cat"]}
    plain = OPERATORS.get(NAME)().decide_batch({**rows, Fields.stats: [{}]})[0]
    flipped = OPERATORS.get(NAME)(horizontal_flip=True).decide_batch({**rows, Fields.stats: [{}]})[0]
    a, b = plain[Fields.stats][0]["image_text_similarity"], flipped[Fields.stats][0]["image_text_similarity"]
    assert len(a) == len(b) == 1 and abs(a[0] - b[0]) > 1e-6
