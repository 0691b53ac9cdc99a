from importlib.util import find_spec

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

pytestmark = pytest.mark.skipif(not (find_spec("torch") and find_spec("transformers")),
                                reason="needs torch and transformers")

from tests.ops.hf_tiny_models import tiny_causal_lm

OP = "instruction_following_difficulty_filter"
MSGS = [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello, how can I help?"}]
ROWS = [
    {"text": "The cat sat on the mat.", "query": "Where is the cat?"},
    {"text": "今天天气很好。", "query": "天气怎么样？"},
    {"text": "Stocks rose 5% 📈 today!", "query": "What happened to stocks?"},
    {"text": "", "query": "empty answer"},
    {"text": "a", "query": ""},
    {"text": "word " * 120, "query": "long"},
    {"messages": MSGS, "text": "ignored", "query": "q"},
]
# values from Data-Juicer 1.6.1 on the same tiny GPT-2 folder (query_template="{query}", range [0, 1])
DJ = [(1.044416105417851, False), (1.0701163829405194, False), (1.0432426200568325, False),
      (1.0779835674754332, False), (1.0, True), (1.009634286858079, False), (0.9673059520084184, True)]


def make(**kw):
    return OPERATORS.get(OP)(**kw)


def test_missing_model_and_defaults():
    import inspect

    params = inspect.signature(OPERATORS.get(OP).__init__).parameters
    assert params["min_score"].default == 1.0 and params["max_score"].default == 100.0
    with pytest.raises(FileNotFoundError, match="no-such/lm"):
        make(hf_model="no-such/lm")


@pytest.mark.slow
def test_matches_data_juicer_and_is_a_loss_ratio(tmp_path):
    lm = tiny_causal_lm(tmp_path / "lm")
    op = make(hf_model=lm, query_template="{query}", min_score=0.0, max_score=1.0)
    batch = {k: [r.get(k) for r in ROWS] for k in ("text", "query", "messages")}
    batch[Fields.stats] = [{} for _ in ROWS]
    op.compute_stats_batched(batch)
    assert [s["ifd_score"] for s in batch[Fields.stats]] == pytest.approx([v for v, _ in DJ], rel=1e-5)
    assert list(op.process_batched(batch)) == [k for _, k in DJ]
    # independent: the ratio of two llm_perplexity_filter losses
    ppl = OPERATORS.get("llm_perplexity_filter")(hf_model=lm, query_template="{query}")
    row = ppl.sample_with_messages(dict(ROWS[0]))
    with_q, without_q = ppl.losses([(row, None), ({**row, "messages": row["messages"][-1:]}, None)])
    assert batch[Fields.stats][0]["ifd_score"] == pytest.approx(with_q / without_q, rel=1e-6)
    rows = [{"text": "x", Fields.stats: {"ifd_score": 0.5}}, {"text": "y", Fields.stats: {"ifd_score": 1.5}}]
    assert [r["text"] for r in run_ops_on_rows([make(hf_model=lm, min_score=0.0, max_score=1.0)], rows)] == ["x"]
