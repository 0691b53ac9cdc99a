import pytest

from data_juicer.ops.filter.llm_difficulty_score_filter import LLMDifficultyScoreFilter
from data_juicer.utils.constant import Fields
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_difficulty_score(llm_server):
    llm_server.respond('{"dimension_scores": {"linguistic_complexity": 3, "conceptual_depth": 4, "prior_knowledge": 5,'
                       ' "step_complexity": 2, "ambiguity": 1}, "tags": ["math"]}')
    op = LLMDifficultyScoreFilter(api_or_hf_model="tiny-llm", min_score=0.6, **api_params(llm_server))
    out = op.compute_stats_batched({"text": ["prove it"], Fields.stats: [{}]})
    st = out[Fields.stats][0]
    assert st["llm_difficulty_score"] == pytest.approx(0.6)
    assert st["llm_difficulty_tags"] == '["math"]'
    assert list(op.process_batched(out)) == [True]
    assert "step_complexity" in llm_server.requests()[0]["messages"][0]["content"]


def test_missing_dimension_is_retried(llm_server):
    llm_server.faults({"kind": "content", "content": '{"dimension_scores": {"ambiguity": 1}}', "times": 1})
    llm_server.respond('{"dimension_scores": {"linguistic_complexity": 5, "conceptual_depth": 5, '
                       '"prior_knowledge": 5, "step_complexity": 5, "ambiguity": 5}}')
    op = LLMDifficultyScoreFilter(api_or_hf_model="tiny-llm", **api_params(llm_server))
    out = op.compute_stats_batched({"text": ["x"], Fields.stats: [{}]})
    assert out[Fields.stats][0]["llm_difficulty_score"] == 1.0
    assert llm_server.stats()["count"] == 2
