from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import assert_ledger_has_raw, build, run_rows, sent

NAME = "extract_nickname_mapper"
ANSWER = ("### 称呼方式1\n- **说话人**：宝玉\n- **被称呼人**：黛玉\n- **宝玉对黛玉的昵称**：林妹妹\n"
          "### 称呼方式2\n- **说话人**：宝玉\n- **被称呼人**：黛玉\n- **宝玉对黛玉的昵称**：林妹妹\n"
          "### 称呼方式3\n- **说话人**：凤姐\n- **被称呼人**：宝玉\n- **贾母对宝玉的昵称**：宝兄弟\n"
          "### 称呼方式4\n- **说话人**：湘云\n- **被称呼人**：宝玉\n- **湘云对宝玉的昵称**：宝玉\n")


def test_parse_and_prompt(llm_server):  # noqa: F811
    llm_server.respond(ANSWER)
    out = run_rows(build(NAME, llm_server), [{"text": "宝玉笑道：林妹妹……"}])
    assert out[0]["__dj__meta__"]["nickname"] == [{
        "relation_source_entity": "宝玉", "relation_target_entity": "黛玉", "relation_description": "林妹妹",
        "relation_keywords": ["nickname"], "relation_strength": None}]
    (msgs,) = sent(llm_server)
    assert msgs[1]["content"] == "# 文本\n```\n宝玉笑道：林妹妹……\n```\n" and "称呼方式1" in msgs[0]["content"]


def test_only_rejected_records_is_a_parse_failure(llm_server):  # noqa: F811
    import pytest

    from data_juicer.models.llm import LLMResponseError

    llm_server.respond(ANSWER.split("### 称呼方式3")[0].replace("宝玉对黛玉", "黛玉对宝玉"))
    with pytest.raises(LLMResponseError):
        run_rows(build(NAME, llm_server, try_num=2), [{"text": "x"}])
    assert len(sent(llm_server)) == 2


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 1}, [{"id": 1, "text": "t"}])
