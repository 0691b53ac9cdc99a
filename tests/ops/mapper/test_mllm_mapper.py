import pytest

from data_juicer.ops.registry import OPERATORS
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "mllm_mapper"
MODEL = "tiny/llava"


def test_missing_default_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/llava-hf/llava-v1.6-vicuna-7b-hf" in str(e.value)
    assert "needed by mllm_mapper" in str(e.value)


@pytest.mark.slow
def test_sample_without_images_is_untouched(models_env):
    root = models_env(MODEL)
    op = OPERATORS.get(NAME)(hf_model=f"{root}/{MODEL}")
    rows = {"text": ["no image here"], "images": [[]]}
    assert op.process_batched(rows)["text"] == ["no image here"]


@pytest.mark.slow
def test_batched_answers_equal_one_at_a_time(models_env, tmp_path):
    root = models_env(MODEL)
    imgs = write_images(tmp_path, 3)
    op = OPERATORS.get(NAME)(hf_model=f"{root}/{MODEL}", max_new_tokens=5)
    out = op.process_batched({"text": ["what is it", "no image", "describe the picture please"],
                              "images": [imgs[:2], [], imgs[2:]]})["text"]
    # greedy decoding of the seeded tiny LLaVA: prompt + answer, one per distinct image
    assert out[0] == ["user : what is it assistant : parrot requesting summer summer summer",
                      "user : what is it assistant : parrot requesting summerbil elaborated"]
    assert out[1] == "no image"
    single = [op.process_batched({"text": [t], "images": [[p]]})["text"][0][0]
              for t, p in (("what is it", imgs[0]), ("what is it", imgs[1]), ("describe the picture please", imgs[2]))]
    assert out[0] + out[2] == single
