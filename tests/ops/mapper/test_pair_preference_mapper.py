import pytest

from data_juicer.models.llm import LLMResponseError
from data_juicer.ops.mapper.pair_preference_mapper import PairPreferenceMapper
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_rejected_and_reason(llm_server):
    llm_server.respond("【回答】\n相反的回答\n【原因】\n立场相反")
    op = PairPreferenceMapper(api_model="tiny-llm", **api_params(llm_server))
    out = op.process_batched({"query": ["q"], "response": ["r"]})
    assert out["rejected_response"] == ["相反的回答"] and out["reason"] == ["立场相反"]
    assert llm_server.requests()[0]["messages"][1]["content"] == (
        "【参考信息】\n\n\n原始问答对如下：\n【问题】\nq\n【回答】\nr")


def test_both_parts_needed(llm_server):
    llm_server.faults({"kind": "content", "content": "【回答】\nonly answer\n【原因】\n", "times": 1})
    llm_server.respond("【回答】x【原因】y")
    op = PairPreferenceMapper(api_model="tiny-llm", rejected_key="rej", reason_key="why", **api_params(llm_server))
    out = op.process_batched({"query": ["q"], "response": ["r"], "text": ["ref"]})
    assert out["rej"] == ["x"] and out["why"] == ["y"]
    assert llm_server.stats()["count"] == 2
    llm_server.reset()
    llm_server.respond("nothing")
    with pytest.raises(LLMResponseError):
        op.process_batched({"query": ["q"], "response": ["r"]})
