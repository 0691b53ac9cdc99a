from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import assert_ledger_has_raw, check_score_op

NAME = "agent_tool_relevance_mapper"
ROW = {"query": "Find the PDF and summarise it", "response": "[tool: search_files] found a.pdf ...",
       "__dj__meta__": {"agent_tool_types": ["search_files", "read_pdf"], "primary_tool_type": "search_files"}}


def test_prompt_parse_retry(llm_server):  # noqa: F811
    msgs = check_score_op(llm_server, NAME, "agent_tool_relevance", "agent_tool", ["tools chosen"], row=ROW)
    assert msgs[1]["content"] == (
        "### User request\nFind the PDF and summarise it\n"
        "### Assistant reply (may include tool trace)\n[tool: search_files] found a.pdf ...\n"
        "### Inferred tool list (agent_tool_types)\nsearch_files, read_pdf\n"
        "### Primary tool (primary_tool_type)\nsearch_files\n")


def test_missing_tool_meta_says_none(llm_server):  # noqa: F811
    from tests.ops.mapper.llm_op_helpers import build, run_rows, sent

    llm_server.respond('{"score": 3, "reason": "r"}')
    out = run_rows(build(NAME, llm_server), [{"query": "q", "response": "r"}])
    assert out[0]["__dj__meta__"]["agent_tool_relevance"]["score"] == 3.0
    assert "(agent_tool_types)\n(none)\n" in sent(llm_server)[0][1]["content"]


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 1}, [dict(ROW, id=1)])
