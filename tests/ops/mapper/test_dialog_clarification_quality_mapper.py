from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import DIALOG_ROW, assert_ledger_has_raw, build, check_score_op, run_rows, sent

NAME = "dialog_clarification_quality_mapper"


def test_prompt_parse_retry(llm_server):  # noqa: F811
    msgs = check_score_op(llm_server, NAME, "dialog_clarification_quality", "dialog_turn",
                          ["focused questions", "solving it directly"])
    user = msgs[1]["content"]
    # the final turn (also the last history pair) is not repeated among the earlier turns
    assert user == ("### Earlier turns\n[User]\nBook me a table\n[Assistant]\nFor how many people?\n"
                    "### Current user message\nFour, tonight\n"
                    "### Assistant reply to score (judge only this part)\nDone: 19:00.\n")


def test_sampling_defaults_language_and_clipping(llm_server):  # noqa: F811
    llm_server.respond('{"score": 3, "reason": "ok"}')
    row = {"query": "q" * 50, "response": "r" * 50}
    run_rows(build(NAME, llm_server, preferred_output_lang="zh-CN", max_query_chars_for_prompt=30,
                   max_response_chars_for_prompt=0), [row])
    (req,) = llm_server.requests()
    assert req["max_tokens"] == 384 and req["temperature"] == 0.2
    system, user = req["messages"][0]["content"], req["messages"][1]["content"]
    assert "简体中文" in system and "只回答一个 JSON 对象" in system
    assert "\n" + "q" * 10 + "\n…[query truncated]…\n" in user and "r" * 50 in user


def test_empty_dialog_is_skipped_without_a_request(llm_server):  # noqa: F811
    out = run_rows(build(NAME, llm_server), [{"text": "x"}, {"query": "", "dialog_history": []}])
    assert [o["__dj__meta__"]["dialog_clarification_quality"] for o in out] == \
        [{"skipped": True, "reason": "empty_input"}] * 2
    assert sent(llm_server) == []


def test_max_round_keeps_the_last_turns(llm_server):  # noqa: F811
    llm_server.respond('{"score": 5, "reason": ""}')
    row = {"dialog_history": [["u1", "a1"], ["u2", "a2"], ["u3", "a3"]]}
    run_rows(build(NAME, llm_server, max_round=2), [row])
    user = sent(llm_server)[0][1]["content"]
    assert "u1" not in user and "[User]\nu2\n[Assistant]\na2\n" in user and "Current user message\nu3" in user


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 2}, [dict(DIALOG_ROW, id=1), dict(DIALOG_ROW, id=2)])
