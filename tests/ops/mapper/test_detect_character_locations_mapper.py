import json
import os

import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.conftest import read_jsonl
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "detect_character_locations_mapper"
TAG = "main_character_locations_list"


@pytest.fixture
def composite_env(models_env):
    """Tiny LLaVA + BLIP ITM + YOLOE (with its text encoder) in ``DJ_MODELS_DIR``; the LLaVA folder."""
    from tests.models.tiny_models_b import build_yoloe

    root = models_env("tiny/llava", "Salesforce/blip-itm-base-coco")
    if not os.path.exists(os.path.join(root, "yoloe-11l-seg.pt")):
        build_yoloe(root)
    return {"hf_model": f"{root}/tiny/llava", "max_new_tokens": 4}


def test_missing_yoloe_and_text_encoder_name_every_path(no_models, tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"{no_models}/yoloe-11l-seg.pt" in str(e.value)
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "my-yoloe.pt").write_bytes(b"x")
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)(yoloe_path=str(tmp_path / "w" / "my-yoloe.pt"))
    assert "mobileclip_blt.ts" in str(e.value) and f"{no_models}/mobileclip_blt.ts" in str(e.value)
    (tmp_path / "w" / "mobileclip_blt.ts").write_bytes(b"x")  # beside the weights: found, next the MLLM
    with pytest.raises(FileNotFoundError, match="llava-hf/llava-v1.6-vicuna-7b-hf"):
        OPERATORS.get(NAME)(yoloe_path=str(tmp_path / "w" / "my-yoloe.pt"))


def test_box_helpers():
    from data_juicer.ops.mapper.detect_character_locations_mapper import box_iou, parse_llm_box

    assert box_iou([0, 0, 10, 10], [5, 0, 15, 10]) == (50 / 150, 100, 100)
    assert box_iou([0, 0, 10, 10], [11, 0, 15, 10]) == (0, 0, 0)
    assert parse_llm_box("USER: x ASSISTANT: ```json [0.1, 0.2, 0.5, 1]```", 200, 100) == [20, 20, 100, 100]
    assert parse_llm_box("ASSISTANT: [0.1, 0.2, 1.5, 1]", 200, 100) is None
    assert parse_llm_box("ASSISTANT: a cat", 200, 100) is None
    assert parse_llm_box("ASSISTANT: [0.1, 0.2, 0.5]", 200, 100) is None


@pytest.mark.slow
def test_params_merge_with_data_juicer_fixed_values(composite_env):
    given = {"hf_model": composite_env["hf_model"]}
    op = OPERATORS.get(NAME)(mllm_mapper_args=given, image_text_matching_filter_args={"min_score": 0.2},
                             accelerator="cpu")
    assert given == {"hf_model": composite_env["hf_model"]}  # the recipe's dict is left alone
    assert (op.mllm.max_new_tokens, op.mllm.temperature, op.mllm.num_beams, op.mllm.accelerator) == \
        (256, 0.2, 1, "cpu")
    assert (op.itm.min_score, op.itm.max_score, op.iou_threshold, op.matching_score_threshold) == (0.2, 1.0, 0.7, 0.4)
    assert op.image_text_matching_filter_args["hf_blip"] == "Salesforce/blip-itm-base-coco"


@pytest.mark.slow
def test_tiny_models_non_json_answers_drop_characters(composite_env, tmp_path):
    imgs = write_images(tmp_path, 2, size=(64, 48))
    op = OPERATORS.get(NAME)(mllm_mapper_args=composite_env, accelerator="cpu")
    out = op.process_batched({"text": ["", "", ""], "images": [[imgs[0]], [imgs[1]], []],
                              "main_character_list": [["dog", "red car"], [], ["cat"]]})
    # the seeded tiny LLaVA answers no JSON: every found character is dropped, as Data-Juicer does
    assert [m[TAG] for m in out[Fields.meta]] == [[], [], []]


@pytest.mark.slow
def test_box_choice_with_a_given_mllm_answer(composite_env, tmp_path, monkeypatch):
    import data_juicer.ops.mapper.detect_character_locations_mapper as mod

    imgs = write_images(tmp_path, 1, size=(64, 48))
    asked = []

    def answer(mllm, pairs):  # the MLLM's answer is given: the whole image
        asked.extend(q for _, q in pairs)
        return ["USER: q ASSISTANT: [0.0, 0.0, 1.0, 1.0]"] * len(pairs)

    monkeypatch.setattr(mod, "mllm_ask", answer)
    batch = {"images": [[imgs[0]]], "main_character_list": [["dog", "red car"]]}
    # the tiny YOLOE finds "dog" only (its first, most confident box); IoU with the whole image
    # is below any threshold > 0.01: BLIP decides; a threshold above 1 drops the character
    op = OPERATORS.get(NAME)(mllm_mapper_args=composite_env, accelerator="cpu", matching_score_threshold=1.01)
    assert op.process_batched(dict(batch))[Fields.meta][0][TAG] == []
    assert asked == ['Please only provide the bounding box coordinate of the region "dog" describes.']
    # IoU threshold below 0: the larger box (the MLLM's) wins without BLIP
    op = OPERATORS.get(NAME)(mllm_mapper_args=composite_env, accelerator="cpu", iou_threshold=-1)
    assert op.process_batched(dict(batch))[Fields.meta][0][TAG] == [{"main_character": "dog", "bbox": [0, 0, 64, 48]}]
    op = OPERATORS.get(NAME)(mllm_mapper_args=composite_env, accelerator="cpu", matching_score_threshold=0.0)
    got = op.process_batched(dict(batch))[Fields.meta][0][TAG]
    assert len(got) == 1 and got[0]["main_character"] == "dog"


@pytest.mark.slow
def test_dj_process_missing_image_goes_to_the_ledger(composite_env, tmp_path, make_recipe):
    from data_juicer.cli.process import main

    imgs = write_images(tmp_path / "in", 1, size=(64, 48))
    rows = [{"id": "a", "text": "", "images": [imgs[0]], "main_character_list": ["dog"]},
            {"id": "bad", "text": "", "images": [str(tmp_path / "no.png")], "main_character_list": ["dog"]}]
    recipe = make_recipe(rows, [{NAME: {"mllm_mapper_args": composite_env, "accelerator": "cpu"}}],
                         keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    res = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["id"] for r in res] == ["a"] and res[0][Fields.meta][TAG] == []
    errors = [e for p in (tmp_path / "out").rglob("errors.jsonl") for e in read_jsonl(p)]
    assert len(errors) == 1 and errors[0]["op"] == NAME and "no.png" in json.dumps(errors[0])
