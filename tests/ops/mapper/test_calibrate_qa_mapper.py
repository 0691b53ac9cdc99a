import pytest

from data_juicer.models.llm import LLMResponseError
from data_juicer.ops.mapper.calibrate_qa_mapper import CalibrateQAMapper
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_calibrates_with_reference(llm_server):
    llm_server.respond("【问题】\n校准问题\n【回答】\n校准回答第一行\n第二行不要")
    op = CalibrateQAMapper(api_model="tiny-llm", **api_params(llm_server))
    out = op.process_batched({"text": ["参考文本"], "query": ["q"], "response": ["a"]})
    # no re.DOTALL, as Data-Juicer: the answer stops at the first line break
    assert out["query"] == ["校准问题"] and out["response"] == ["校准回答第一行"]
    assert llm_server.requests()[0]["messages"][1]["content"] == "【参考信息】\n参考文本\n【问题】\nq\n【回答】\na"


def test_answer_must_start_with_the_marker(llm_server):
    llm_server.respond("前言 【问题】x【回答】y")
    op = CalibrateQAMapper(api_model="tiny-llm", try_num=1, **api_params(llm_server))
    with pytest.raises(LLMResponseError):
        op.process_batched({"text": ["t"], "query": ["q"], "response": ["a"]})
