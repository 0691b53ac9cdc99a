from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import build, run_rows, sent

NAME = "extract_support_text_mapper"
ROW = {"text": "Line one. The storm broke the dam. Line three.", "__dj__meta__": {"event_description": "a flood"}}


def test_prompt_and_strip(llm_server):  # noqa: F811
    llm_server.respond("  The storm broke the dam.\n")
    out = run_rows(build(NAME, llm_server), [ROW])
    assert out[0]["__dj__meta__"]["support_text"] == "The storm broke the dam."
    (msgs,) = sent(llm_server)
    assert msgs[1]["content"] == f"### 原文：\n{ROW['text']}\n\n### 总结：\na flood\n\n### 原文摘录：\n"


def test_missing_summary_is_left_alone(llm_server):  # noqa: F811
    out = run_rows(build(NAME, llm_server), [{"text": "t"}, {"text": "t", "__dj__meta__": {"event_description": 3}}])
    assert [o["__dj__meta__"] for o in out] == [{}, {"event_description": 3}] and sent(llm_server) == []


def test_empty_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    llm_server.respond("   ")
    from tests.ops.mapper.llm_op_helpers import run_recipe

    rc, out, ledger = run_recipe(tmp_path, [dict(ROW, id=1)], [{NAME: {
        "api_model": llm_server.served_name, "api_endpoint": llm_server.base_url, "try_num": 2}}])
    assert rc == 0 and out == [] and [e["error_type"] for e in ledger] == ["LLMResponseError"]
    assert "raw response: '   '" in ledger[0]["message"]


