from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import DIALOG_ROW, assert_ledger_has_raw, check_score_op

NAME = "dialog_error_recovery_mapper"


def test_prompt_parse_retry(llm_server):  # noqa: F811
    msgs = check_score_op(llm_server, NAME, "dialog_error_recovery", "dialog_turn",
                          ['give score 5', 'correcting or disputing'])
    assert "### Current user message\nFour, tonight\n" in msgs[1]["content"]


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 1}, [dict(DIALOG_ROW, id=7)])
