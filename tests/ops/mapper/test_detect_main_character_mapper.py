import json
import os

import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401
from tests.ops.vision_other_helpers import dry_run

NAME = "detect_main_character_mapper"
LLAVA = "tiny/llava"
ARGS = {"mllm_mapper_args": {"hf_model": LLAVA, "max_new_tokens": 5}}


def test_parse_the_json_answer():
    from data_juicer.ops.mapper.detect_main_character_mapper import parse_main_characters

    ans = 'Sure! {"count": 2,\n "main_character": ["man in a red hat", "dog"]} hope this helps'
    assert parse_main_characters(ans, 0) == ["man in a red hat", "dog"]
    assert parse_main_characters(ans, 2) == ["man in a red hat", "dog"]
    assert parse_main_characters(ans, 3) == []  # fewer characters than asked for
    assert parse_main_characters('{"main_character": ["a"]}', 0) == ["a"]  # no count: 0
    assert parse_main_characters('{"main_character": ["a"]}', 1) == []
    assert parse_main_characters('{"count": 1, "main_character": ["a \\"b\\""]}', 0) == []  # backslashes dropped
    assert parse_main_characters("no json here", 0) == []
    assert parse_main_characters("{broken", 0) == []
    assert parse_main_characters('} {"count": 1}', 0) == []  # not parseable from first { to last }
    assert parse_main_characters('{"count": 1}', 0) == []


def test_sub_op_args_fill_data_juicers_fixed_values():
    from data_juicer.ops.mapper.detect_main_character_mapper import MLLM_DEFAULTS, sub_op_args

    assert sub_op_args(MLLM_DEFAULTS, {"max_new_tokens": 9}, "cuda") == {
        "max_new_tokens": 9, "temperature": 0.2, "top_p": None, "num_beams": 1,
        "hf_model": "llava-hf/llava-v1.6-vicuna-7b-hf", "accelerator": "cuda"}
    assert sub_op_args(MLLM_DEFAULTS, {"accelerator": "cpu"}, "cuda")["accelerator"] == "cpu"


def test_missing_default_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/llava-hf/llava-v1.6-vicuna-7b-hf" in str(e.value)


def test_missing_model_under_dry_run(no_models, make_recipe, capsys):
    rc, out = dry_run(make_recipe, [{NAME: {}}], capsys=capsys)
    assert rc == 2
    assert f"{no_models}/llava-hf/llava-v1.6-vicuna-7b-hf" in out


def test_defaults(models_env):
    models_env(LLAVA)
    op = OPERATORS.get(NAME)(**ARGS)
    assert op.filter_min_character_num == 0 and op.accelerator == "cuda"
    assert (op.mllm_mapper.hf_model, op.mllm_mapper.max_new_tokens, op.mllm_mapper.temperature,
            op.mllm_mapper.num_beams, op.mllm_mapper.accelerator) == (LLAVA, 5, 0.2, 1, "cuda")


@pytest.mark.slow
def test_batch_asks_about_the_first_image(models_env, tmp_path):
    models_env(LLAVA)
    imgs = write_images(tmp_path, 3)
    op = OPERATORS.get(NAME)(**ARGS)
    rows = {"text": ["a cat", "no image", "two dogs"], "images": [[imgs[0], imgs[1]], [], [imgs[2]]],
            Fields.meta: [{"x": 1}, None, {}]}
    out = op.process_batched(rows)
    # the tiny random LLaVA answers no JSON: every list is empty, other meta kept
    assert out[Fields.meta] == [{"x": 1, "main_character_list": []}, {"main_character_list": []},
                                {"main_character_list": []}]
    # what was asked: the prompt around the text, about the first image only
    from data_juicer.ops.mapper.detect_main_character_mapper import PROMPT, PROMPT_END

    asked = op.mllm_mapper.process_batched({"text": [PROMPT + "a cat" + PROMPT_END], "images": [[imgs[0]]]})["text"]
    assert len(asked) == 1 and len(asked[0]) == 1 and "main characters" in asked[0][0]


@pytest.mark.slow
def test_end_to_end_bad_images_go_to_the_ledger(models_env, tmp_path, make_recipe):
    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    models_env(LLAVA)
    imgs = write_images(tmp_path / "imgs", 1)
    rows = [{"id": "a", "text": "a cat", "images": [imgs[0]]},
            {"id": "gone", "text": "a dog", "images": [str(tmp_path / "nope.png")]}]
    recipe = make_recipe(rows, [{NAME: ARGS}], keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = read_jsonl(out / "result.jsonl")
    assert [r["id"] for r in res] == ["a"] and res[0][Fields.meta]["main_character_list"] == []
    job = next(os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert [e["op"] for e in errors] == [NAME] and "nope.png" in json.dumps(errors)
