import pytest

from data_juicer.ops.filter.llm_quality_score_filter import LLMQualityScoreFilter
from data_juicer.utils.constant import Fields
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_quality_score_and_range(llm_server):
    llm_server.respond('{"dimension_scores": {"accuracy": 5, "grammar": 5, "informativeness": 4, "coherence": 4}, '
                       '"flags": [], "rationale": "r", "recommendation": ["keep"]}', match="good")
    llm_server.respond('{"dimension_scores": {"accuracy": 1, "grammar": 2, "informativeness": 1, "coherence": 1}}')
    op = LLMQualityScoreFilter(api_or_hf_model="tiny-llm", **api_params(llm_server))
    out = op.compute_stats_batched({"text": ["good text", "bad text"], Fields.stats: [{}, {}]})
    st = out[Fields.stats]
    assert [s["llm_quality_score"] for s in st] == [pytest.approx(0.9), pytest.approx(0.25)]
    assert st[1]["llm_quality_tags"] == "" and '"recommendation": []' in st[1]["llm_quality_record"]
    assert list(op.process_batched(out)) == [True, False]
    assert "accuracy" in llm_server.requests()[0]["messages"][0]["content"]


def test_zero_score_is_judged_like_any_other(llm_server):
    llm_server.respond('{"dimension_scores": {}}')
    op = LLMQualityScoreFilter(api_or_hf_model="tiny-llm", **api_params(llm_server))
    out = op.compute_stats_batched({"text": ["x"], Fields.stats: [{}]})
    assert out[Fields.stats][0]["llm_quality_score"] == 0.0
    assert list(op.process_batched(out)) == [False]
