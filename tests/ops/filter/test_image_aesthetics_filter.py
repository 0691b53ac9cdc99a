import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "image_aesthetics_filter"
MODEL = "shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE"


def test_empty_model_name_means_the_laion_v2_predictor(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)(hf_scorer_model="")
    assert f"looked at: {no_models}/{MODEL}" in str(e.value)


def test_unknown_predictor_variant_is_rejected(tmp_path, monkeypatch):
    (tmp_path / "my-scorer").mkdir()
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="must say v1, v2 \\+ linear, or v2 \\+ relu"):
        OPERATORS.get(NAME)(hf_scorer_model="my-scorer")


def test_bad_strategy_is_rejected(no_models):
    with pytest.raises(ValueError, match="Keep strategy"):
        OPERATORS.get(NAME)(any_or_all="most")


def test_head_layout_matches_simple_aesthetics_predictor():
    from data_juicer.models.vision import aesthetics_class, aesthetics_variant

    assert aesthetics_variant("shunk031/aesthetics-predictor-v1-vit-large-patch14") == "v1"
    assert aesthetics_variant("x/aesthetics-predictor-v2-ava-logos-l14-reluMSE") == "v2_relu"
    from transformers import CLIPVisionConfig

    cfg = CLIPVisionConfig(hidden_size=8, intermediate_size=8, num_hidden_layers=1, num_attention_heads=2,
                           image_size=16, patch_size=8, projection_dim=4)
    keys = {k for k in aesthetics_class("v2_relu")(cfg).state_dict() if k.startswith("layers.")}
    # the module indices of simple-aesthetics-predictor 0.1.2's ReLU head (its checkpoints load as is)
    assert {k.split(".")[1] for k in keys} == {"0", "3", "6", "9", "11"}
    keys = {k.split(".")[1] for k in aesthetics_class("v2_linear")(cfg).state_dict() if k.startswith("layers.")}
    assert keys == {"0", "2", "4", "6", "7"}


@pytest.mark.slow
def test_scores_divided_by_ten_and_batched(models_env, tmp_path):
    import torch

    from data_juicer.models.vision import aesthetics_class

    root = models_env(MODEL)
    imgs = write_images(tmp_path, 3)
    op = OPERATORS.get(NAME)(min_score=0.0272, max_score=1.0)
    samples = {"images": [imgs[:2], [], imgs[1:]], Fields.stats: [{}, {}, {}]}
    samples, keep = op.decide_batch(samples)
    got = [s["image_aesthetics_scores"] for s in samples[Fields.stats]]
    assert got[0] == pytest.approx([0.02740360, 0.02722332], abs=1e-6)
    assert got[1] == [] and got[2][0] == pytest.approx(got[0][1], abs=1e-7)
    assert keep == [True, True, any(v >= 0.0272 for v in got[2])]
    # one image at a time through the model's own forward, as Data-Juicer (logits / 10)
    from PIL import Image
    from transformers import CLIPProcessor

    model = aesthetics_class("v2_linear").from_pretrained(f"{root}/{MODEL}").eval()
    proc = CLIPProcessor.from_pretrained(f"{root}/{MODEL}", backend="pil")
    with torch.no_grad():
        ref = [model(**proc(images=[Image.open(p).convert("RGB")], return_tensors="pt")).logits.item() / 10
               for p in imgs[:2]]
    assert got[0] == pytest.approx(ref, abs=1e-6)
