from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import TWO_TURNS, assert_ledger_has_raw, check_turn_op

NAME = "dialog_topic_detection_mapper"
ANSWERS = ["话题分析：first look\n话题类别：X", "话题分析：second look\n话题类别：X\n多余的一行"]


def test_turns_prompts_parse_retry(llm_server):  # noqa: F811
    check_turn_op(llm_server, NAME, ("话题分析", "话题类别"), ANSWERS,
                  {"dialog_topic_labels": ["X"], "dialog_topic_labels_analysis": ["first look", "second look"]},
                  cand_param="topic_candidates")


def test_english_note_keeps_the_prefixes(llm_server):  # noqa: F811
    from tests.ops.mapper.llm_op_helpers import build, run_rows, sent

    llm_server.respond("话题分析：calm\n话题类别：Y")
    out = run_rows(build(NAME, llm_server, preferred_output_lang="en"), [{"query": "hello"}])
    assert out[0]["__dj__meta__"]["dialog_topic_labels"] == ["Y"]
    assert "「话题分析：」「话题类别：」" in sent(llm_server)[0][0]["content"]


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 1}, [dict(TWO_TURNS, id=3)])
