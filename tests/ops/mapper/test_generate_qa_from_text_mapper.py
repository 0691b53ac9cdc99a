import pytest

from data_juicer.models.llm import LLMResponseError
from data_juicer.ops.mapper.generate_qa_from_text_mapper import GenerateQAFromTextMapper
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_fans_out_pairs(llm_server):
    llm_server.respond("Human: q1?\nAssistant: a1.\nHuman: q2?\nAssistant: a2.")
    op = GenerateQAFromTextMapper(hf_model="tiny-llm", max_num=1, **api_params(llm_server))
    out = op.process_batched({"text": ["doc one", "doc two"], "id": [1, 2]})
    assert out == {"text": ["doc one", "doc two"], "id": [1, 2], "query": ["q1?", "q1?"], "response": ["a1.", "a1."]}
    assert llm_server.requests()[0]["messages"] == [{"role": "user", "content": "doc one"}] or \
        llm_server.requests()[0]["messages"] == [{"role": "user", "content": "doc two"}]


def test_no_pair_is_an_error_not_a_silent_drop(llm_server):
    llm_server.respond("nothing")
    op = GenerateQAFromTextMapper(hf_model="tiny-llm", **api_params(llm_server))
    with pytest.raises(LLMResponseError):
        op.process_batched({"text": ["doc"]})
