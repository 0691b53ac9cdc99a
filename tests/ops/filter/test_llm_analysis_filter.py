import json

import pytest

from data_juicer.models.llm import LLMResponseError
from data_juicer.ops.filter.llm_analysis_filter import LLMAnalysisFilter
from data_juicer.utils.constant import Fields
from tests.llm_fixtures import api_params, llm_server, run_recipe  # noqa: F401

ANSWER = ('Here you go: {"dimension_scores": {"clarity": 4, "relevance": 5, "usefulness": 3, "fluency": 4}, '
          '"tags": {"topic": "AI", "style": "Informational"}, "flags": [], "rationale": "ok", '
          '"recommendation": "review"} done')


def _op(srv, **kw):
    return LLMAnalysisFilter(api_or_hf_model=srv.served_name, **api_params(srv), **kw)


def _batch(*texts):
    return {"text": list(texts), Fields.stats: [{} for _ in texts]}


def test_scores_tags_record_and_prompt(llm_server):
    llm_server.respond(ANSWER)
    op = _op(llm_server)
    out = op.compute_stats_batched(_batch("hello world"))
    st = out[Fields.stats][0]
    assert st["llm_analysis_score"] == pytest.approx(0.8)
    rec = json.loads(st["llm_analysis_record"])
    assert rec["recommendation"] == ["review"] and rec["dimension_scores"]["usefulness"] == 3
    assert st["llm_analysis_tags"] == '{"topic": "AI", "style": "Informational"}'
    assert list(op.process_batched(out)) == [True]
    (req,) = llm_server.requests()
    assert req["model"] == "tiny-llm"
    assert req["messages"][0] == {"role": "system", "content": LLMAnalysisFilter.DEFAULT_SYSTEM_PROMPT}
    assert req["messages"][1] == {"role": "user",
                                  "content": "# Data\n'''\n**Text**\nhello world\n'''\n\n# Response\njson\n"}


def test_several_fields_and_own_templates(llm_server):
    llm_server.respond(ANSWER)
    op = _op(llm_server, input_keys=["query", "answer"], field_names=["Q", "A"], input_template="<{data}>",
             field_template="{field_name}={field_data}", system_prompt="S", preferred_output_lang="zh",
             sampling_params={"temperature": 0.2})
    op.compute_stats_batched({"query": ["q1"], "answer": ["a1"], Fields.stats: [{}]})
    (req,) = llm_server.requests()
    assert req["messages"][1]["content"] == "<Q=q1\n\nA=a1>"
    assert req["messages"][0]["content"].startswith("S\n\n") and "Chinese" in req["messages"][0]["content"]
    assert req["temperature"] == 0.2


def test_dim_required_keys_and_range(llm_server):
    llm_server.respond(ANSWER)
    op = _op(llm_server, dim_required_keys=["clarity", "usefulness"], min_score=0.75)
    out = op.compute_stats_batched(_batch("x"))
    assert out[Fields.stats][0]["llm_analysis_score"] == pytest.approx(0.7)
    assert list(op.process_batched(out)) == [False]


def test_retries_malformed_and_missing_dimension(llm_server):
    llm_server.faults({"kind": "content", "content": "I think it is fine.", "times": 1},
                      {"kind": "content", "content": '{"dimension_scores": {"clarity": 5}}', "times": 1})
    llm_server.respond(ANSWER)
    out = _op(llm_server).compute_stats_batched(_batch("x"))
    assert out[Fields.stats][0]["llm_analysis_score"] == pytest.approx(0.8)
    assert llm_server.stats()["count"] == 3


def test_never_parses_raises_with_raw(llm_server):
    llm_server.respond("no json at all")
    with pytest.raises(LLMResponseError, match="raw response: 'no json at all'"):
        _op(llm_server, try_num=2).compute_stats_batched(_batch("x"))
    assert llm_server.stats()["count"] == 2


def test_zero_score_keeps_and_existing_stat_is_reused(llm_server):
    llm_server.respond('{"dimension_scores": {}, "rationale": "?"}')
    op = _op(llm_server, min_score=0.9)
    out = op.compute_stats_batched({"text": ["a", "b"], Fields.stats: [{}, {"llm_analysis_score": 0.3}]})
    assert [s["llm_analysis_score"] for s in out[Fields.stats]] == [0.0, 0.3]
    assert list(op.process_batched(out)) == [True, False]
    assert llm_server.stats()["count"] == 1


def test_batch_is_sent_concurrently(llm_server):
    llm_server.faults({"kind": "sleep", "seconds": 0.3, "times": 6})
    llm_server.respond(ANSWER)
    _op(llm_server).compute_stats_batched(_batch(*"abcdef"))
    assert llm_server.stats()["max_in_flight"] == 6


def test_bad_params():
    with pytest.raises(ValueError, match="same length"):
        LLMAnalysisFilter(input_keys=["a", "b"], field_names=["A"], model_params={"base_url": "http://x/v1"})


def test_missing_hf_model_is_a_clear_error():
    with pytest.raises(Exception, match="no-such/model-xyz") as e:
        LLMAnalysisFilter(api_or_hf_model="no-such/model-xyz", is_hf_model=True)
    assert "DJ_MODELS_DIR" in str(e.value) or "looked" in str(e.value).lower()


def test_end_to_end_ledger_records_the_unparsed_sample(llm_server, make_recipe):
    llm_server.respond("garbage answer", match="BROKEN")
    llm_server.respond(ANSWER)
    rows = [{"id": 1, "text": "fine one"}, {"id": 2, "text": "BROKEN sample"}, {"id": 3, "text": "fine two"}]
    op = {"llm_analysis_filter": dict(api_or_hf_model="tiny-llm", try_num=2, **api_params(llm_server))}
    rc, out, ledger = run_recipe(make_recipe, rows, [op])
    assert rc == 0
    assert [r["id"] for r in out] == [1, 3]
    (entry,) = ledger
    assert entry["op"] == "llm_analysis_filter" and entry["id"] == {"id": 2}
    assert "raw response: 'garbage answer'" in entry["message"]
    # 3 first attempts + 1 retry of the broken one; the row-by-row isolation resent nothing
    assert llm_server.stats()["count"] == 4


def test_use_cache_rerun_sends_nothing(llm_server, tmp_path):
    llm_server.respond(ANSWER)
    job = tmp_path / "work" / "job1"

    def run():
        op = _op(llm_server, work_dir=str(job))
        op.use_cache = True  # what the executor sets from the recipe's use_cache
        return op.compute_stats_batched(_batch("a", "b"))[Fields.stats]

    first = run()
    assert llm_server.stats()["count"] == 2
    assert run() == first
    assert llm_server.stats()["count"] == 2
    assert (tmp_path / "work" / "llm_cache" / "llm_cache.sqlite").exists()
