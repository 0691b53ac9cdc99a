import pytest

from data_juicer.ops.filter.llm_task_relevance_filter import LLMTaskRelevanceFilter
from data_juicer.utils.constant import Fields
from tests.llm_fixtures import api_params, llm_server  # noqa: F401

ANSWER = ('{"dimension_scores": {"topical_relevance": 5, "linguistic_style_match": 4, "task_match": 5, '
          '"knowledge_alignment": 4, "potential_utility": 2}}')


def test_validation_block_in_prompt_and_score(llm_server):
    llm_server.respond(ANSWER)
    op = LLMTaskRelevanceFilter(api_or_hf_model="tiny-llm", min_score=0.85, task_desc="math word problems",
                                valid_dataset=[{"text": "v1"}, {"text": "v2"}, {"text": "v3"}], n_shot=2,
                                **api_params(llm_server))
    out = op.compute_stats_batched({"text": ["sample"], Fields.stats: [{}]})
    assert out[Fields.stats][0]["llm_task_relevance"] == pytest.approx(0.8)
    assert list(op.process_batched(out)) == [False]
    user = llm_server.requests()[0]["messages"][1]["content"]
    assert user == ("# Task Description\nmath word problems\n\n# Validation Data\n'''\n**Text**\nv1\n'''\n\n'''\n"
                    "**Text**\nv2\n'''\n\n# Data\n'''\n**Text**\nsample\n'''\n\n# Response\njson\n")


def test_negative_score_is_recomputed_and_no_task_is_an_error(llm_server):
    llm_server.respond(ANSWER)
    op = LLMTaskRelevanceFilter(api_or_hf_model="tiny-llm", task_desc="t", **api_params(llm_server))
    out = op.compute_stats_batched({"text": ["s"], Fields.stats: [{"llm_task_relevance": -1}]})
    assert out[Fields.stats][0]["llm_task_relevance"] == pytest.approx(0.8)
    bare = LLMTaskRelevanceFilter(api_or_hf_model="tiny-llm", **api_params(llm_server))
    with pytest.raises(ValueError, match="no validation task"):
        bare.compute_stats_batched({"text": ["s"], Fields.stats: [{}]})
    with pytest.raises(ValueError, match="validation information is empty"):
        bare.prepare_valid_feature([], None)
