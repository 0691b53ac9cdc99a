import pytest

from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import assert_ledger_has_raw, build, run_rows, sent

NAME = "agent_skill_insight_mapper"
ROW = {"__dj__meta__": {"agent_tool_types": ["read_file", " ", "grep"], "agent_skill_types": "log triage"}}


def test_prompt_and_phrase_split(llm_server):  # noqa: F811
    llm_server.respond(" Trace errors in logs， bulk-edit config files、trace errors in logs; summarise PDFs ")
    out = run_rows(build(NAME, llm_server), [ROW])
    assert out[0]["__dj__meta__"]["agent_skill_insights"] == [
        "Trace errors in logs", "bulk-edit config files", "trace errors in logs", "summarise PDFs"]
    (msgs,) = sent(llm_server)
    assert msgs[1] == {"role": "user", "content": "Tools: read_file, grep\nSkills: log triage"}
    assert "3-5 capability phrases" in msgs[0]["content"]


def test_no_tags_no_request_and_zh_prompt(llm_server):  # noqa: F811
    out = run_rows(build(NAME, llm_server), [{"__dj__meta__": {"agent_tool_types": []}}, {"x": 1}])
    assert out[0]["__dj__meta__"]["agent_skill_insights"] == [] and out[1].get("__dj__meta__") is None
    assert sent(llm_server) == []
    llm_server.respond("日志关键字追溯")
    run_rows(build(NAME, llm_server, preferred_output_lang="zh"), [ROW])
    assert "简体中文" in sent(llm_server)[0][0]["content"]


def test_only_separators_is_asked_again_then_fails(llm_server):  # noqa: F811
    from data_juicer.models.llm import LLMResponseError

    llm_server.respond(" ,;， ")
    with pytest.raises(LLMResponseError, match="attempt"):
        run_rows(build(NAME, llm_server, try_num=2), [ROW])
    assert len(sent(llm_server)) == 2


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 1}, [dict(ROW, id=1)], garbage="、、；")
