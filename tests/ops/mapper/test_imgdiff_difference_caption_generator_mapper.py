import json
import os

import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.tiny_models_a import models_a, models_a_env  # noqa: F401
from tests.models.vision_tiny_models import no_models, vision_models, write_images  # noqa: F401
from tests.ops.vision_other_helpers import dry_run

NAME = "imgdiff_difference_caption_generator_mapper"
BOX = "__dj__bbox__"
MODELS = ("tiny/llava", "Salesforce/blip-itm-base-coco", "tiny/clip-long")
ARGS = {"mllm_mapper_args": {"hf_model": "tiny/llava", "max_new_tokens": 4},
        "text_pair_similarity_filter_args": {"hf_clip": "tiny/clip-long"}}


def test_region_prompt_and_geometry():
    import numpy as np

    from data_juicer.ops.mapper.imgdiff_difference_caption_generator_mapper import crop, red_box_pair, region_prompt

    # centre (20, 10), 10 x 4 in a 100 x 50 image: corners 0.15, 0.16, 0.25, 0.24
    assert region_prompt([20, 10, 10, 4], 100, 50) == \
        "Please provide a clear description for this region: [0.15, 0.16, 0.25, 0.24]."
    assert region_prompt([50, 25, 100, 50], 100, 50) == \
        "Please provide a clear description for this region: [0.00, 0.00, 1.00, 1.00]."
    img = np.arange(50 * 100 * 3, dtype=np.uint8).reshape(50, 100, 3)
    assert crop(img, [20, 10, 10, 4]).shape == (4, 10, 3)
    assert (crop(img, [20, 10, 10, 4]) == img[8:12, 15:25]).all()
    pair = red_box_pair(np.zeros((50, 100, 3), np.uint8), np.zeros((50, 100, 3), np.uint8), [20, 10, 10, 4])
    assert pair.shape == (50, 220, 3)
    assert pair[3, 10].tolist() == [0, 0, 255]  # the box starts 5 px outside the region: (10, 3)
    assert pair[3, 130].tolist() == [0, 0, 255]  # and again on the right image (offset 120)
    assert pair[25, 105].tolist() == [0, 0, 0]  # the black bar


def test_missing_default_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/llava-hf/llava-v1.6-vicuna-7b-hf" in str(e.value)


def test_missing_model_under_dry_run(no_models, make_recipe, capsys):
    rc, out = dry_run(make_recipe, [{NAME: {}}], capsys=capsys)
    assert rc == 2
    assert f"{no_models}/llava-hf/llava-v1.6-vicuna-7b-hf" in out


def test_sub_ops_get_data_juicers_fixed_values(models_a_env):
    models_a_env(*MODELS, "openai/clip-vit-base-patch32")
    op = OPERATORS.get(NAME)(mllm_mapper_args={"hf_model": "tiny/llava"})
    assert (op.itm.hf_blip, op.itm.min_score, op.itm.max_score) == ("Salesforce/blip-itm-base-coco", 0.1, 1.0)
    assert (op.tps.hf_clip, op.tps.min_score, op.tps.text_key_second) == ("openai/clip-vit-base-patch32", 0.1,
                                                                          "target_text")
    assert op.mllm.max_new_tokens == 256 and op.mllm.accelerator == op.itm.accelerator == "cuda"


def test_zero_box_and_missing_boxes(models_a_env, tmp_path):
    models_a_env(*MODELS)
    op = OPERATORS.get(NAME)(**ARGS)
    rows = {"text": ["x"], "image_path1": ["unused.png"], "image_path2": ["unused.png"],
            Fields.meta: [{BOX: [[0, 0, 0, 0]]}]}
    assert op.process_batched(rows)[Fields.meta] == [{
        BOX: [[0.0, 0.0, 0.0, 0.0]], "region_caption1": [""], "region_caption2": [""],
        "bbox_difference_captions": [""]}]
    with pytest.raises(ValueError, match="no meta '__dj__bbox__'"):
        op.process_batched({"text": ["x"], "image_path1": ["a.png"], "image_path2": ["b.png"], Fields.meta: [{}]})


@pytest.mark.slow
def test_regions_of_a_batch(models_a_env, tmp_path):
    models_a_env(*MODELS)
    imgs = write_images(tmp_path, 3, size=(64, 48))
    op = OPERATORS.get(NAME)(**ARGS)
    rows = {"text": ["x", "y", "z"], "image_path1": imgs, "image_path2": [imgs[1], imgs[2], imgs[0]],
            Fields.meta: [{BOX: [[10, 10, 8, 8], [40, 30, 10, 6], [32, 24, 64, 48]]}, {BOX: [[0, 0, 0, 0]]},
                          {BOX: [[20, 20, 6, 6]]}]}
    metas = op.process_batched(rows)[Fields.meta]
    # row 0: the whole-image box (more than a tenth of the image) is never asked about; the tiny
    # random models keep both small ones (ITM does not score captions without image tokens,
    # the random CLIP finds every caption pair similar)
    assert metas[0][BOX] == [[10.0, 10.0, 8.0, 8.0], [40.0, 30.0, 10.0, 6.0]]
    assert metas[1] == {BOX: [[0.0, 0.0, 0.0, 0.0]], "region_caption1": [""], "region_caption2": [""],
                        "bbox_difference_captions": [""]}
    assert metas[2][BOX] == [[20.0, 20.0, 6.0, 6.0]]
    for m in (metas[0], metas[2]):
        n = len(m[BOX])
        assert len(m["region_caption1"]) == len(m["region_caption2"]) == len(m["bbox_difference_captions"]) == n
    # the region questions name the box corners; the difference question quotes both captions
    assert metas[2]["region_caption1"][0].startswith(
        "user : please provide a clear description for this region : [ 0. 27, 0. 35, 0. 36, 0. 48 ]")
    diff = metas[2]["bbox_difference_captions"][0]
    assert diff.startswith("user : analyse the left image and the right image")
    assert "the detail within the red bounding box in the right image is" in diff
    # a stricter text-pair range drops every region: the empty result
    strict = OPERATORS.get(NAME)(**{**ARGS, "text_pair_similarity_filter_args": {"hf_clip": "tiny/clip-long",
                                                                                  "min_score": 1.0}})
    got = strict.process_batched({k: v[2:] for k, v in rows.items()})[Fields.meta][0]
    assert got["bbox_difference_captions"] == [""] and got[BOX] == [[0.0, 0.0, 0.0, 0.0]]


@pytest.mark.slow
def test_end_to_end_bad_images_go_to_the_ledger(models_a_env, tmp_path, make_recipe):
    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    models_a_env(*MODELS)
    imgs = write_images(tmp_path / "imgs", 2, size=(64, 48))
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not a png")
    rows = [{"id": "a", "text": "x", "image_path1": imgs[0], "image_path2": imgs[1],
             Fields.meta: {BOX: [[20, 20, 6, 6]]}},
            {"id": "gone", "text": "x", "image_path1": str(tmp_path / "nope.png"), "image_path2": imgs[1],
             Fields.meta: {BOX: [[20, 20, 6, 6]]}},
            {"id": "junk", "text": "x", "image_path1": imgs[0], "image_path2": str(bad),
             Fields.meta: {BOX: [[20, 20, 6, 6]]}}]
    recipe = make_recipe(rows, [{NAME: ARGS}], keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = read_jsonl(out / "result.jsonl")
    assert [r["id"] for r in res] == ["a"] and len(res[0][Fields.meta]["bbox_difference_captions"]) == 1
    job = next(os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert sorted(e["op"] for e in errors) == [NAME] * 2
    text = json.dumps(errors)
    assert "nope.png" in text and "bad.png" in text
