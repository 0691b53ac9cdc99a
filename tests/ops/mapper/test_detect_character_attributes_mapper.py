import json
import os

import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.conftest import read_jsonl
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "detect_character_attributes_mapper"
TAG = "main_character_attributes_list"


@pytest.fixture
def loc_args(models_env):
    from tests.models.tiny_models_b import build_yoloe

    root = models_env("tiny/llava", "Salesforce/blip-itm-base-coco")
    if not os.path.exists(os.path.join(root, "yoloe-11l-seg.pt")):
        build_yoloe(root)
    return {"mllm_mapper_args": {"hf_model": f"{root}/tiny/llava", "max_new_tokens": 4}}


def test_missing_models_name_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"{no_models}/yoloe-11l-seg.pt" in str(e.value)


def test_prompts_and_feature_parsing():
    from data_juicer.ops.mapper.detect_character_attributes_mapper import (candidate_features, check_prompt,
                                                                           crop_prompt)

    assert candidate_features('["red", "big_dog"]') == ["red", "big_dog"]
    assert candidate_features('["red_fur, tall"]') == ["red fur", "tall"]
    assert candidate_features("red\nsmall") == ["red", "small"]
    assert candidate_features("red_fur, tall") == ["red fur", "tall"]
    assert candidate_features("[1, 2]") is None
    assert crop_prompt("dog", "animal") == (
        "Please analyze the key characteristics of the primary animal in this image, specifically the 'dog', "
        "which may include color, action, and other typical features. Currently identified characteristics "
        "include \"animal\". Please expand this list and respond in an identically formatted phrase string list.")
    assert crop_prompt("sign", "text").startswith(
        "Please analyze the key characteristics of the primary character in this image, specifically the 'sign'. "
        "Currently identified characteristics include \"text\".")
    assert check_prompt("dog", "red").startswith('Please analyze the main character in this image, specifically '
                                                 'the "dog". Is "red" one of its features?')


@pytest.mark.slow
def test_attributes_with_given_mllm_answers(loc_args, tmp_path, monkeypatch):
    import data_juicer.ops.common.composite_vision as cv
    import data_juicer.ops.mapper.detect_character_attributes_mapper as attrs
    import data_juicer.ops.mapper.detect_character_locations_mapper as locs

    def answer(mllm, pairs):  # the MLLM's answers, by question
        out = []
        for _, q in pairs:
            if q.startswith("Please only provide the bounding box"):
                a = "[0.0, 0.0, 1.0, 1.0]"
            elif q.startswith("Please classify"):
                a = "animal"
            elif q.startswith("I will provide"):
                a = '["brown", "running"]' if '"dog"' not in q else "sleepy"
            elif q.startswith("Please analyze the key"):
                a = '["furry, spotted_tail"]'
            else:
                a = "yes" if '"furry"' in q else "no"
            out.append("USER: q ASSISTANT: " + a)
        return out

    monkeypatch.setattr(locs, "mllm_ask", answer)
    monkeypatch.setattr(attrs, "mllm_ask", answer)
    assert cv.mllm_ask is not answer
    imgs = write_images(tmp_path, 1, size=(64, 48))
    loc = dict(loc_args, iou_threshold=-1)  # the MLLM's whole-image box wins the location
    op = OPERATORS.get(NAME)(detect_character_locations_mapper_args=loc, accelerator="cpu")
    out = op.process_batched({"text": ["a sleepy dog and a red car"], "images": [[imgs[0]]],
                              "main_character_list": [["dog", "red car"]]})
    # the tiny YOLOE finds "dog" only: it is located and its crop features checked ('furry' kept);
    # "red car" keeps the caption's features, without a box
    assert out[Fields.meta][0][TAG] == [
        {"main_character": "dog", "bbox": [0, 0, 64, 48], "characteristic_list": ["furry"]},
        {"main_character": "red car", "bbox": [], "characteristic_list": ["brown", "running"]},
    ]


@pytest.mark.slow
def test_tiny_models_end_to_end_and_ledger(loc_args, tmp_path, make_recipe):
    from data_juicer.cli.process import main

    imgs = write_images(tmp_path / "in", 1, size=(64, 48))
    rows = [{"id": "a", "text": "a dog", "images": [imgs[0]], "main_character_list": ["dog"]},
            {"id": "none", "text": "x", "images": [], "main_character_list": ["dog"]},
            {"id": "bad", "text": "a dog", "images": [str(tmp_path / "no.png")], "main_character_list": ["dog"]}]
    recipe = make_recipe(rows, [{NAME: {"detect_character_locations_mapper_args": loc_args, "accelerator": "cpu"}}],
                         keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    res = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["id"] for r in res] == ["a", "none"]
    # the seeded tiny LLaVA: no JSON box, so "dog" is not located; its caption features are the
    # (non-JSON) answer itself, in a list
    got = res[0][Fields.meta][TAG]
    assert len(got) == 1 and got[0]["main_character"] == "dog" and got[0]["bbox"] == []
    assert isinstance(got[0]["characteristic_list"], list) and len(got[0]["characteristic_list"]) == 1
    assert res[1][Fields.meta][TAG] == []
    errors = [e for p in (tmp_path / "out").rglob("errors.jsonl") for e in read_jsonl(p)]
    assert len(errors) == 1 and errors[0]["op"] == NAME and "no.png" in json.dumps(errors[0])
