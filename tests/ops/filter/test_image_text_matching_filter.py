import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "image_text_matching_filter"
MODEL = "Salesforce/blip-itm-base-coco"
IMG, EOC = "<__dj__image>", "<|__dj__eoc|>"


@pytest.mark.parametrize("params,needle", [({"reduce_mode": "sum"}, "Reduce mode [sum]"),
                                           ({"any_or_all": "few"}, "Keep strategy [few]")])
def test_bad_params_are_rejected(no_models, params, needle):
    with pytest.raises(ValueError) as e:
        OPERATORS.get(NAME)(**params)
    assert needle in str(e.value)


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/{MODEL}" in str(e.value)


@pytest.mark.slow
def test_matching_probability_equals_one_pair_at_a_time(models_env, tmp_path):
    import torch
    from PIL import Image
    from transformers import BlipForImageTextRetrieval, BlipProcessor

    root = models_env(MODEL)
    imgs = write_images(tmp_path, 3)
    op = OPERATORS.get(NAME)(min_score=0.15)
    samples = {"images": [imgs[:2], [imgs[2]]],
               "text": [f"{IMG} a cat {IMG} {EOC} the dog", f"{IMG} the red dog on the mat"],
               Fields.stats: [{}, {}]}
    samples, keep = op.decide_batch(samples)
    got = [s["image_text_matching_score"] for s in samples[Fields.stats]]
    assert got[0] == pytest.approx([0.18807510], abs=1e-6)
    # Data-Juicer: one processor call and forward per (image, text), softmax(itm_score)[:, 1], mean
    model = BlipForImageTextRetrieval.from_pretrained(f"{root}/{MODEL}").eval()
    proc = BlipProcessor.from_pretrained(f"{root}/{MODEL}", backend="pil")  # Data-Juicer's (PIL) pre-processing
    ref = []
    with torch.no_grad():
        for p, text in [(imgs[0], "a cat"), (imgs[1], "a cat"), (imgs[2], "the red dog on the mat")]:
            out = model(**proc(text=text, images=Image.open(p).convert("RGB"), return_tensors="pt",
                               truncation=True, max_length=32, padding=True))
            ref.append(out.itm_score.softmax(dim=-1)[0, 1].item())
    assert got[0][0] == pytest.approx((ref[0] + ref[1]) / 2, abs=1e-6)
    assert got[1][0] == pytest.approx(ref[2], abs=1e-6)
    assert keep == [True, ref[2] >= 0.15]
