import pytest

from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import TWO_TURNS, assert_ledger_has_raw, build, check_turn_op, run_rows, sent

NAME = "dialog_sentiment_intensity_mapper"


def test_turns_prompts_parse_retry(llm_server):  # noqa: F811
    check_turn_op(llm_server, NAME, ("情绪分析", "情绪值"), ["情绪分析：neutral\n情绪值：0", "情绪分析：annoyed\n情绪值：-3\n"],
                  {"dialog_sentiment_intensity": [0, -3],
                   "dialog_sentiment_intensity_analysis": ["neutral", "annoyed"]})


def test_missing_value_is_zero_and_a_non_integer_is_asked_again(llm_server):  # noqa: F811
    from data_juicer.models.llm import LLMResponseError

    llm_server.respond("情绪分析：happy\n")
    out = run_rows(build(NAME, llm_server), [{"query": "yay"}])
    assert out[0]["__dj__meta__"]["dialog_sentiment_intensity"] == [0]
    llm_server.reset()
    llm_server.respond("情绪分析：happy\n情绪值：very")
    with pytest.raises(LLMResponseError):
        run_rows(build(NAME, llm_server, try_num=2), [{"query": "yay"}])
    assert len(sent(llm_server)) == 2


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 1}, [dict(TWO_TURNS, id=3)])
