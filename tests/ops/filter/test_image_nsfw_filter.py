import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "image_nsfw_filter"
MODEL = "Falconsai/nsfw_image_detection"


def test_bad_strategy_is_rejected(no_models):
    with pytest.raises(ValueError, match=r"Keep strategy \[some\] is not supported"):
        OPERATORS.get(NAME)(any_or_all="some")


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    msg = str(e.value)
    assert f"looked at: {no_models}/{MODEL}" in msg and "the Hugging Face cache" in msg
    assert "needed by image_nsfw_filter" in msg
    with pytest.raises(FileNotFoundError, match="Falconsai/nsfw_image_detection"):
        OPERATORS.get(NAME).check_models({})


@pytest.mark.slow
def test_scores_batched_equal_one_at_a_time(models_env, tmp_path):
    import torch
    from transformers import AutoImageProcessor, ViTForImageClassification

    root = models_env(MODEL)
    imgs = write_images(tmp_path, 3)
    op = OPERATORS.get(NAME)(max_score=0.2, any_or_all="all")
    samples = {"images": [imgs[:2], [], [imgs[2], imgs[2]]], Fields.stats: [{}, {}, {}]}
    samples, keep = op.decide_batch(samples)
    got = [s["image_nsfw_score"] for s in samples[Fields.stats]]
    # literal values of the seeded tiny model; the repeated image is scored once
    assert got[0] == pytest.approx([0.20534481, 0.17869218], abs=1e-6)
    assert got[1] == [] and len(got[2]) == 1
    assert keep == [False, True, got[2][0] <= 0.2]
    # Data-Juicer's way: one sample at a time through its processor and model
    from PIL import Image

    model = ViTForImageClassification.from_pretrained(f"{root}/{MODEL}")
    proc = AutoImageProcessor.from_pretrained(f"{root}/{MODEL}", backend="pil")  # Data-Juicer's (PIL) processor
    with torch.no_grad():
        ref = torch.softmax(model(**proc(images=[Image.open(p).convert("RGB") for p in imgs[:2]],
                                         return_tensors="pt")).logits, -1)[:, 1].tolist()
    assert got[0] == pytest.approx(ref, abs=1e-6)


@pytest.mark.slow
def test_missing_image_goes_to_the_ledger_and_the_rest_runs(vision_models, make_recipe, tmp_path):
    import json
    import os

    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    root = vision_models.need(MODEL)
    imgs = write_images(tmp_path / "imgs", 3)
    rows = [{"id": f"s{k}", "text": "x", "images": [p]} for k, p in enumerate(imgs)]
    rows.insert(1, {"id": "bad", "text": "x", "images": [str(tmp_path / "nope.png")]})
    recipe = make_recipe(rows, [{"image_nsfw_filter": {"hf_nsfw_model": f"{root}/{MODEL}", "max_score": 1.0}}])
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    assert [r["id"] for r in read_jsonl(out / "result.jsonl")] == ["s0", "s1", "s2"]
    job = [os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))][0]
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert len(errors) == 1 and errors[0]["op"] == "image_nsfw_filter" and "nope.png" in json.dumps(errors[0])
