from importlib.util import find_spec

import pytest

from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

pytestmark = pytest.mark.skipif(not (find_spec("torch") and find_spec("transformers")),
                                reason="needs torch and transformers")

from tests.ops.hf_tiny_models import tiny_causal_lm

OP = "in_context_influence_filter"
MSGS = [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello, how can I help?"}]
ROWS = [
    {"text": "The cat sat on the mat.", "query": "Where is the cat?"},
    {"text": "今天天气很好。", "query": "天气怎么样？"},
    {"text": "Stocks rose 5% 📈 today!", "query": "What happened to stocks?"},
    {"text": "", "query": "empty answer"},
    {"text": "a", "query": ""},
    {"messages": MSGS, "text": "ignored", "query": "q"},
]
VALID = [{"query": "What is 2+2?", "text": "4"}, {"query": "Capital of France?", "text": "Paris"},
         {"query": "Color of the sky?", "text": "Blue"}]
CASES = {"default": {}, "demo": {"valid_as_demo": True, "task_desc": "Answer briefly."},
         "nshot": {"n_shot": 2, "task_desc": "Answer briefly.", "min_score": 0.99, "max_score": 1.01}}
# values from Data-Juicer 1.6.1 on the same tiny GPT-2 folder (query_template="{query}")
DJ = {
    "default": [(0.9250453756040343, False), (0.886810034973887, False), (0.8823323753587449, False),
                (0.9289843430566197, False), (0.8655395978698036, False), (0.8830500758600771, False)],
    "demo": [(0.9932277690194121, False), (0.9865577852937948, False), (1.0264308317988458, True),
             (0.7628645773558356, False), (0.9018435426070021, False), (0.9611792108048701, False)],
    "nshot": [(1.1039480884171085, False), (1.0257846706364324, False), (1.0579559041694406, False),
              (1.0255594764795108, False), (0.9769620136694357, False), (0.9326100956901029, False)],
}


def make(**kw):
    return OPERATORS.get(OP)(**kw)


def test_params(tmp_path):
    with pytest.raises(ValueError, match="valid_dataset"):
        make(hf_model=str(tmp_path))
    with pytest.raises(ValueError, match="n_shot"):
        make(hf_model=str(tmp_path), valid_dataset=VALID, n_shot=-1)
    with pytest.raises(FileNotFoundError, match="no-such/lm"):
        make(hf_model="no-such/lm", valid_dataset=VALID)
    op = make(hf_model=str(tmp_path), valid_dataset=VALID, n_shot=2, task_desc="T", query_template="{query}")
    assert [m["content"] for m in op.valid_feature["valid_samples"][1]["messages"]] == ["T", "Capital of France?",
                                                                                         "Paris"]


@pytest.mark.slow
def test_matches_data_juicer_and_by_loss_ratios(tmp_path):
    lm = tiny_causal_lm(tmp_path / "lm")
    for name, kw in CASES.items():
        op = make(hf_model=lm, valid_dataset=VALID, query_template="{query}", **kw)
        batch = {k: [r.get(k) for r in ROWS] for k in ("text", "query", "messages")}
        batch[Fields.stats] = [{} for _ in ROWS]
        op.compute_stats_batched(batch)
        got = [s["in_context_influence"] for s in batch[Fields.stats]]
        assert got == pytest.approx([v for v, _ in DJ[name]], rel=1e-5), name
        assert list(op.process_batched(batch)) == [k for _, k in DJ[name]], name
    # independent: the default score from llm_perplexity_filter losses, one pair at a time
    ppl = OPERATORS.get("llm_perplexity_filter")(hf_model=lm, query_template="{query}")
    row = ppl.sample_with_messages(dict(ROWS[0]))
    valid = [ppl.sample_with_messages(dict(v)) for v in VALID]
    want = sum(ppl.losses([(v, None)])[0] / ppl.losses([(v, row)])[0] for v in valid) / 3
    assert DJ["default"][0][0] == pytest.approx(want, rel=1e-5)
