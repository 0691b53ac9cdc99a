import pytest

from data_juicer.models.llm import LLMResponseError
from data_juicer.ops.filter.llm_condition_filter import LLMConditionFilter
from data_juicer.utils.constant import Fields
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def _stats(op, texts, **extra):
    batch = {"text": list(texts), Fields.stats: [{} for _ in texts], **extra}
    return op.compute_stats_batched(batch)


def test_yes_no_and_usage(llm_server):
    llm_server.respond("Yes, it is.", match="cake")
    llm_server.respond("no")
    op = LLMConditionFilter(condition="is about cooking", api_or_hf_model="tiny-llm", **api_params(llm_server))
    out = _stats(op, ["bake a cake", "tax law", ""])
    st = out[Fields.stats]
    assert [s["llm_condition_filter_result"] for s in st] == [True, False, False]
    assert list(op.process_batched(out)) == [True, False, False]
    assert st[0]["llm_semantic_usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
                                           "cost_estimate": 0.0}
    assert "llm_semantic_usage" not in st[2]
    assert len(llm_server.requests()) == 2
    req = [r for r in llm_server.requests() if "cake" in r["messages"][1]["content"]][0]
    assert req["messages"][1]["content"] == ("# Text\nbake a cake\n\n# Condition\nis about cooking\n\n"
                                             "Does the text meet the condition? Reply yes or no.")


def test_real_usage_is_summed(llm_server):
    # the tiny random model, constrained to answer yes or no (vLLM's guided_regex)
    op = LLMConditionFilter(condition="c", api_or_hf_model="tiny-llm",
                            sampling_params={"max_tokens": 4, "guided_regex": "(yes|no)"}, **api_params(llm_server))
    st = _stats(op, ["some text"])[Fields.stats][0]
    assert isinstance(st["llm_condition_filter_result"], bool)
    usage = st["llm_semantic_usage"]
    assert 2 <= usage["completion_tokens"] <= 3 and usage["prompt_tokens"] > 10
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_grounding_strategy_examples_and_empty_condition(llm_server):
    llm_server.respond("yes")
    op = LLMConditionFilter(condition="c", api_or_hf_model="tiny-llm", knowledge_grounding_key="kg",
                            strategy="few_shot", examples="EX", **api_params(llm_server))
    _stats(op, ["t"], kg=["background"])
    assert llm_server.requests()[0]["messages"][1]["content"].startswith(
        "# Background\nbackground\n\n# Examples\nEX\n\n# Text\nt")
    everything = LLMConditionFilter(condition="", api_or_hf_model="tiny-llm", **api_params(llm_server))
    assert _stats(everything, ["t"])[Fields.stats][0]["llm_condition_filter_result"] is True


def test_empty_answers_go_to_the_ledger(llm_server):
    llm_server.respond("   ")
    op = LLMConditionFilter(condition="c", api_or_hf_model="tiny-llm", try_num=2, **api_params(llm_server))
    with pytest.raises(LLMResponseError):
        _stats(op, ["t"])
