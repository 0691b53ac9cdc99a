import json

import pytest

from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import assert_ledger_has_raw, build, run_rows, sent

NAME = "agent_insight_llm_mapper"
ROW = {"query": "  fix my build  ", "response": "r" * 600,
       "__dj__stats__": {"text_len": 42, "llm_quality_record": json.dumps({"rationale": "ok"})},
       "__dj__meta__": {"agent_bad_case_tier": "high_precision", "tool_fail_count": 2,
                        "dialog_coreference": {"score": 2.0, "reason": "wrong file"},
                        "dialog_proactivity": {"skipped": True}}}
INSIGHT = {"headline": "Build fix failed twice", "root_causes": [], "narrative_alignment": "mixed",
           "human_review_priority": "P1", "viz_facets": ["agent_pt"]}


def test_evidence_pack_and_parse(llm_server):  # noqa: F811
    answer = "Here you go:\n" + json.dumps(INSIGHT)
    llm_server.respond(answer)
    out = run_rows(build(NAME, llm_server, response_preview_max_chars=10), [ROW])
    meta = out[0]["__dj__meta__"]
    assert meta["agent_insight_llm"] == INSIGHT and meta["agent_insight_llm_raw"] == answer
    assert meta["agent_pipeline_output_lang"] == "en"
    pack = json.loads(sent(llm_server)[0][1]["content"])
    assert pack["query_preview"] == "fix my build" and pack["response_preview"] == "r" * 10
    assert pack["tools"]["tool_fail_count"] == 2 and pack["text_stats"]["text_len"] == 42
    assert pack["llm_eval_support"]["llm_quality_record"] == {"rationale": "ok"}
    assert pack["dialog_quality_llm"] == {"dialog_coreference": {"score": 2.0, "reason": "wrong file"},
                                          "dialog_proactivity": {"skipped": True}}
    assert pack["deterministic_bad_case"] == {"signals": None, "tier": "high_precision"}


def test_tiers_and_existing_insights_are_skipped(llm_server):  # noqa: F811
    out = run_rows(build(NAME, llm_server, run_for_tiers=["watchlist"]), [ROW])
    assert "agent_insight_llm" not in out[0]["__dj__meta__"] and sent(llm_server) == []
    done = dict(ROW, __dj__meta__={"agent_insight_llm": {"headline": "x"}})
    assert run_rows(build(NAME, llm_server), [done])[0]["__dj__meta__"]["agent_insight_llm"] == {"headline": "x"}
    assert sent(llm_server) == []


def test_retry_then_ledger_error(llm_server):  # noqa: F811
    from data_juicer.models.llm import LLMResponseError

    llm_server.respond("{not json", times=1)
    llm_server.respond(json.dumps(INSIGHT))
    assert run_rows(build(NAME, llm_server), [ROW])[0]["__dj__meta__"]["agent_insight_llm"] == INSIGHT
    assert len(sent(llm_server)) == 2
    llm_server.reset()
    llm_server.respond("[1, 2]")
    with pytest.raises(LLMResponseError, match=r"\[1, 2\]"):
        run_rows(build(NAME, llm_server), [ROW])


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 1}, [{"id": 1, "query": "q"}])
