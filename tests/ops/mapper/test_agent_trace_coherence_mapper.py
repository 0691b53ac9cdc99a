from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import assert_ledger_has_raw, build, check_score_op, run_rows, sent

NAME = "agent_trace_coherence_mapper"
ROW = {"text": "user: fix the bug\nassistant: [tool: read_file] ...\nassistant: patched"}


def test_prompt_parse_retry(llm_server):  # noqa: F811
    msgs = check_score_op(llm_server, NAME, "agent_trace_coherence", "agent_trace", ["trace of one agent session"],
                          row=ROW)
    assert msgs[1]["content"] == "### Session trace excerpt (may include tool output)\n" + ROW["text"] + "\n"


def test_clipping_and_skip(llm_server):  # noqa: F811
    llm_server.respond('{"score": 4, "reason": ""}')
    out = run_rows(build(NAME, llm_server, trajectory_text_max_chars=25), [{"text": "x" * 40}, {"text": "  "}])
    assert out[1]["__dj__meta__"]["agent_trace_coherence"] == {"skipped": True, "reason": "empty_input"}
    (msgs,) = sent(llm_server)
    assert msgs[1]["content"] == "### Session trace excerpt (may include tool output)\nxxxxxx\n…[text truncated]…\n"


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 1}, [dict(ROW, id=1)])
