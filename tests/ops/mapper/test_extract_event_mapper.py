from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import assert_ledger_has_raw, build, run_recipe, run_rows, sent

NAME = "extract_event_mapper"
ANSWER = ("### 情节1：\n- **情节描述**： 悟空大闹天宫。\n- **相关人物**：孙悟空，玉帝\n"
          "### 情节2：\n- **情节描述**： 无人出场的过场。\n- **相关人物**：\n"
          "### 情节3：\n- **情节描述**： 如来压住悟空。\n- **相关人物**：如来、孙悟空\n")


def test_fan_out_one_row_per_event(llm_server):  # noqa: F811
    llm_server.respond(ANSWER, match="天宫")
    llm_server.respond("### 情节1：\n- **情节描述**： 取经。\n- **相关人物**：唐僧\n")
    rows = [{"id": 1, "text": "天宫的故事"}, {"id": 2, "text": "取经的故事", "__dj__meta__": {"k": 1}}]
    out = run_rows(build(NAME, llm_server), rows)
    assert [(o["id"], o["__dj__meta__"]) for o in out] == [
        (1, {"event_description": "悟空大闹天宫。", "relevant_characters": ["孙悟空", "玉帝"]}),
        (1, {"event_description": "如来压住悟空。", "relevant_characters": ["如来", "孙悟空"]}),
        (2, {"k": 1, "event_description": "取经。", "relevant_characters": ["唐僧"]})]
    # requests go out concurrently, so in any order
    assert sorted(m[1]["content"] for m in sent(llm_server)) == [
        "# 文本\n```\n取经的故事\n```\n", "# 文本\n```\n天宫的故事\n```\n"]


def test_end_to_end_fan_out_and_ledger(tmp_path, llm_server):  # noqa: F811
    llm_server.respond(ANSWER, match="天宫")
    llm_server.respond("nothing")
    rc, out, ledger = run_recipe(tmp_path, [{"id": 1, "text": "天宫"}, {"id": 2, "text": "别的"}], [{NAME: {
        "api_model": llm_server.served_name, "api_endpoint": llm_server.base_url, "try_num": 2}}])
    assert rc == 0 and [o["__dj__meta__"]["event_description"] for o in out] == ["悟空大闹天宫。", "如来压住悟空。"]
    assert [(e["sample"]["id"], e["error_type"]) for e in ledger] == [(2, "LLMResponseError")]
    assert "nothing" in ledger[0]["message"]


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 1}, [{"id": 1, "text": "t"}])
