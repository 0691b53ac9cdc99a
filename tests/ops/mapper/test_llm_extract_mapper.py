import pytest

from data_juicer.models.llm import LLMResponseError
from data_juicer.ops.mapper.llm_extract_mapper import LLMExtractMapper
from data_juicer.utils.constant import Fields
from tests.llm_fixtures import api_params, llm_server  # noqa: F401

SCHEMA = {"city": "the city named", "year": "the year"}


def test_extracts_into_meta_with_usage(llm_server):
    llm_server.respond('Sure: {"city": "Paris", "year": 1889, "extra": 1}')
    op = LLMExtractMapper(input_keys=["text", "title"], output_schema=SCHEMA, api_or_hf_model="tiny-llm",
                          knowledge_grounding_fixed="KG", **api_params(llm_server))
    out = op.process_batched({"text": ["The tower opened in 1889 in Paris.", None], "title": ["T", None]})
    meta = out[Fields.meta]
    assert meta[0]["llm_extract"] == {"city": "Paris", "year": 1889}
    assert meta[0]["llm_semantic_usage"]["total_tokens"] == 0
    assert meta[1] == {"llm_extract": {"city": None, "year": None}}
    (req,) = llm_server.requests()
    user = req["messages"][1]["content"]
    assert user.startswith("# Background / grounding\nKG\n\n# Input\n"
                           "text: The tower opened in 1889 in Paris.\ntitle: T")
    assert "- city: the city named\n- year: the year" in user


def test_flat_meta_and_array_for_one_key(llm_server):
    llm_server.respond('["a", "b"]')
    op = LLMExtractMapper(input_keys=["text"], output_schema={"items": "list them"}, meta_output_key=None,
                          api_or_hf_model="tiny-llm", **api_params(llm_server))
    assert op.process_batched({"text": ["x"]})[Fields.meta][0]["items"] == ["a", "b"]


def test_no_json_goes_to_ledger_and_required_params(llm_server):
    llm_server.respond("I cannot")
    op = LLMExtractMapper(input_keys=["text"], output_schema=SCHEMA, api_or_hf_model="tiny-llm", try_num=2,
                          **api_params(llm_server))
    with pytest.raises(LLMResponseError, match="I cannot"):
        op.process_batched({"text": ["x"]})
    with pytest.raises(ValueError, match="input_keys is required"):
        LLMExtractMapper(output_schema=SCHEMA, **api_params(llm_server))
