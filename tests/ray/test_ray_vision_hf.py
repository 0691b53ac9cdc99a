"""The image-text model filters on executor_type: ray run in actor pools and give the default executor's output."""
import pytest

from tests.conftest import read_jsonl
from tests.models.vision_tiny_models import vision_models, write_images  # noqa: F401

IMG = "<__dj__image>"
CLIP, AES = "openai/clip-vit-base-patch32", "shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE"
NSFW, WM = "Falconsai/nsfw_image_detection", "amrul-hzz/watermark_detector"


def _recipe(root):
    # wide ranges: a batch whose rows are all dropped trips the Ray executor (an empty Arrow batch's
    # __dj__error__ column is null-typed in _split_errors; reported), so every row is kept here
    # model folders given as paths: Ray workers need no DJ_MODELS_DIR
    return [
        {"image_text_similarity_filter": {"hf_clip": f"{root}/{CLIP}", "min_score": -1.0, "batch_size": 5}},
        {"image_aesthetics_filter": {"hf_scorer_model": f"{root}/{AES}", "min_score": 0.0, "batch_size": 5}},
        {"image_nsfw_filter": {"hf_nsfw_model": f"{root}/{NSFW}", "max_score": 1.0, "batch_size": 5}},
        {"image_watermark_filter": {"hf_watermark_model": f"{root}/{WM}", "prob_threshold": 1.0, "batch_size": 5}},
    ]


@pytest.mark.slow
def test_image_text_recipe_same_on_ray_in_actor_pools(run_both, vision_models, tmp_path):
    from data_juicer.core.ray_executor import needs_actor
    from data_juicer.ops.registry import OPERATORS

    root = vision_models.need(CLIP, AES, NSFW, WM)
    imgs = write_images(tmp_path / "imgs", 10, seed=3)
    rows = [{"id": k, "text": f"{IMG} the cat number {k}", "images": [imgs[k]]} for k in range(10)]
    process = _recipe(root)
    for entry in process:
        (name, params), = entry.items()
        assert needs_actor(OPERATORS.get(name)(**params)), name
    d, r = run_both(rows, process, keep_stats_in_res_ds=True)
    out_d, out_r = read_jsonl(d / "result.jsonl"), read_jsonl(r / "result.jsonl")
    assert [x["id"] for x in out_r] == [x["id"] for x in out_d] and len(out_d) == 10
    for a, b in zip(out_d, out_r):
        for key, vals in a["__dj__stats__"].items():
            assert b["__dj__stats__"][key] == pytest.approx(vals, abs=1e-6), key
