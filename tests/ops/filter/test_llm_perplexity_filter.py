import math
from importlib.util import find_spec

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

pytestmark = pytest.mark.skipif(not (find_spec("torch") and find_spec("transformers")),
                                reason="needs torch and transformers")

from tests.ops.hf_tiny_models import tiny_causal_lm

OP = "llm_perplexity_filter"
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
# values from Data-Juicer 1.6.1 on the same tiny GPT-2 folder (random weights, so perplexities are huge)
DJ = {
    "ppl": [(44287.16072925507, False), (25719.542968401616, True), (56604.99010031688, False),
            (3929.4309013436264, True), (21129.944894625998, True), (6924.724494958253, True),
            (31634.733451875138, False)],
    "ppl_tmpl": [(49672.73356127966, True), (28829.365448333112, True), (49685.241240841846, True),
                 (24533.779591381342, True), (21453.607054959808, True), (5545.57809365169, True),
                 (31634.733451875138, True)],
}


def make(**kw):
    return OPERATORS.get(OP)(**kw)


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    return tiny_causal_lm(tmp_path_factory.mktemp("ppl") / "lm")


def _stats(op, rows):
    batch = {k: [r.get(k) for r in rows] for k in ("text", "query", "messages")}
    batch[Fields.stats] = [{} for _ in rows]
    op.compute_stats_batched(batch)
    return batch[Fields.stats], list(op.process_batched(batch))


def test_missing_model():
    with pytest.raises(FileNotFoundError, match="Qwen/Qwen2.5-0.5B"):
        make()


@pytest.mark.slow
def test_matches_data_juicer(lm):
    for name, op in [("ppl", make(hf_model=lm, max_score=30000.0)),
                     ("ppl_tmpl", make(hf_model=lm, query_template="Q: {query}", response_template="A: {text}",
                                       max_score=1e9))]:
        stats, keep = _stats(op, ROWS)
        got = [s["llm_perplexity"] for s in stats]
        assert got == pytest.approx([v for v, _ in DJ[name]], rel=1e-5)
        assert keep == [k for _, k in DJ[name]]


@pytest.mark.slow
def test_by_hand_and_max_length(lm):
    import torch
    from transformers import AutoTokenizer, GPT2LMHeadModel

    tok = AutoTokenizer.from_pretrained(lm)
    model = GPT2LMHeadModel.from_pretrained(lm).eval()

    def by_hand(full, response, max_length=None):
        ids = tok(full)["input_ids"]
        if max_length is not None and len(ids) > max_length:  # keep [CLS] + the END of the text + [SEP]
            ids = ids[:1] + ids[1:-1][-(max_length - 2):] + ids[-1:]
        k = len(tok(response, truncation=True, max_length=max_length)["input_ids"]) - 1  # BOS ([CLS]) not counted
        scored = [t for t in range(1, len(ids)) if t >= len(ids) - k]
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)
        nll = [-logp[t - 1, ids[t]].item() for t in scored]
        return math.exp(sum(nll) / len(nll))

    stats, _ = _stats(make(hf_model=lm, query_template="Q: {query}"), ROWS[:1])
    assert stats[0]["llm_perplexity"] == pytest.approx(by_hand("Q: Where is the cat? The cat sat on the mat.",
                                                               "The cat sat on the mat."), rel=1e-5)
    # max_length keeps the END of the text (left truncation)
    stats, _ = _stats(make(hf_model=lm, model_params={"max_length": 6}), ROWS[5:6])
    assert stats[0]["llm_perplexity"] == pytest.approx(by_hand("word " * 120, "word " * 120, 6), rel=1e-5)


@pytest.mark.slow
def test_reuse_and_range(lm):
    rows = [{"text": "x", Fields.stats: {"llm_perplexity": 50.0}}, {"text": "y", Fields.stats: {"llm_perplexity": 150.0}}]
    out = run_ops_on_rows([make(hf_model=lm)], rows)
    assert [r["text"] for r in out] == ["x"]
