import pytest

from data_juicer.models.llm import LLMResponseError
from data_juicer.ops.mapper.optimize_qa_mapper import OptimizeQAMapper
from data_juicer.ops.mapper.optimize_query_mapper import OptimizeQueryMapper
from data_juicer.ops.mapper.optimize_response_mapper import OptimizeResponseMapper
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def _batch():
    return {"query": ["q1", "q2"], "response": ["a1", "a2"]}


def test_rewrites_both_parts_and_sends_the_pair(llm_server):
    llm_server.respond("好的。\n【问题】\n新问题一\n多行\n【回答】\n新回答一\n第二行", match="q1")
    llm_server.respond("【问题】\n新问题二\n【回答】\n")
    op = OptimizeQAMapper(api_or_hf_model="tiny-llm", is_hf_model=False, **api_params(llm_server))
    out = op.process_batched(_batch())
    assert out["query"] == ["新问题一\n多行", "新问题二"]
    assert out["response"] == ["新回答一\n第二行", "a2"]  # an empty part keeps the original
    req = [r for r in llm_server.requests() if "q1" in r["messages"][1]["content"]][0]
    assert req["messages"][0]["content"] == OptimizeQAMapper.DEFAULT_SYSTEM_PROMPT
    assert req["messages"][1]["content"] == "原始问答对如下：\n【问题】\nq1\n【回答】\na1"


def test_unparsed_answer_raises(llm_server):
    llm_server.respond("no markers")
    op = OptimizeQAMapper(api_or_hf_model="tiny-llm", is_hf_model=False, try_num=2, **api_params(llm_server))
    with pytest.raises(LLMResponseError, match="no markers"):
        op.process_batched(_batch())


def test_query_and_response_variants(llm_server):
    llm_server.respond("  better question  ")
    q = OptimizeQueryMapper(api_or_hf_model="tiny-llm", is_hf_model=False, **api_params(llm_server))
    assert q.process_batched(_batch()) == {"query": ["better question"] * 2, "response": ["a1", "a2"]}
    r = OptimizeResponseMapper(api_or_hf_model="tiny-llm", is_hf_model=False, **api_params(llm_server))
    assert r.process_batched(_batch()) == {"query": ["q1", "q2"], "response": ["better question"] * 2}


def test_default_hf_model_missing_is_a_clear_error():
    with pytest.raises(Exception, match="Qwen/Qwen2.5-7B-Instruct"):
        OptimizeQAMapper()
