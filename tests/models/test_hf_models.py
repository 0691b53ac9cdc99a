from importlib.util import find_spec

import pytest

from data_juicer.models import loader
from data_juicer.models.hf import check_hf_model, load_hf_model, pick_device

pytestmark = pytest.mark.skipif(not (find_spec("torch") and find_spec("transformers")),
                                reason="needs torch and transformers")


def test_missing_model_names_places_and_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError) as e:
        check_hf_model("org/no-such-model", who="some_op")
    msg = str(e.value)
    assert "org/no-such-model" in msg and "some_op" in msg and str(tmp_path) in msg


def test_pick_device_falls_back_to_cpu():
    import torch

    assert pick_device(None) == "cpu"
    assert pick_device("cpu", {"device": "cpu"}) == "cpu"
    assert pick_device("cuda") == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.slow
def test_loads_once_by_saved_class_from_models_dir(tmp_path, monkeypatch):
    from tests.ops.hf_tiny_models import tiny_causal_lm

    tiny_causal_lm(tmp_path / "org" / "tiny-lm")
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    loader.clear_models()
    model, tok = load_hf_model("org/tiny-lm", who="t_op", fallback_class="AutoModelForCausalLM")
    assert type(model).__name__ == "GPT2LMHeadModel" and not model.training
    assert tok("hello")["input_ids"][0] == 101
    again, _ = load_hf_model("org/tiny-lm", who="t_op", fallback_class="AutoModelForCausalLM")
    assert again is model
    assert loader.release_models("t_op") == 1
    assert load_hf_model("org/tiny-lm", who="t_op", fallback_class="AutoModelForCausalLM")[0] is not model
    loader.clear_models()
