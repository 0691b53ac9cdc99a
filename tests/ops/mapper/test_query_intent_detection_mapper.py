from importlib.util import find_spec

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

pytestmark = pytest.mark.skipif(not (find_spec("torch") and find_spec("transformers")),
                                reason="needs torch and transformers")

from tests.ops.hf_tiny_models import tiny_classifier, tiny_translator

OP = "query_intent_detection_mapper"
QUERIES = ["What time does the store open?", "I hate this product, it broke after one day.",
           "今天天气怎么样？", "Stocks rallied after the earnings report 📈", "", "tell me a joke " * 20]
# values from Data-Juicer 1.6.1 on the same tiny classifier, zh_to_en_hf_model=None
DJ = [("neu", 0.5830817222595215), ("neu", 0.49552640318870544), ("neu", 0.48460131883621216),
      ("neu", 0.44906026124954224), ("neg", 0.4218461513519287), ("neg", 0.39894771575927734)]


def make(**kw):
    return OPERATORS.get(OP)(**kw)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    base = tmp_path_factory.mktemp("query_models")
    return tiny_classifier(base / "cls", ["neg", "neu", "pos"]), tiny_translator(base / "tr")


def test_missing_models_and_bad_keys(tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such/intent"):
        make(hf_model="no-such/intent", zh_to_en_hf_model=None)
    # the default translation model is needed too unless switched off
    with pytest.raises(FileNotFoundError, match="Helsinki-NLP/opus-mt-zh-en"):
        make(hf_model=str(tmp_path))
    with pytest.raises(ValueError, match="label_key"):
        make(hf_model=str(tmp_path), zh_to_en_hf_model=None, label_key="")


@pytest.mark.slow
def test_matches_data_juicer(models):
    cls, _ = models
    out = run_ops_on_rows([make(hf_model=cls, zh_to_en_hf_model=None)], [{"query": q} for q in QUERIES])
    got = [(r[Fields.meta]["query_intent_label"], r[Fields.meta]["query_intent_label_score"]) for r in out]
    assert [g[0] for g in got] == [d[0] for d in DJ]
    # batched forward passes with padding differ from one-query passes in the last bits
    assert [g[1] for g in got] == pytest.approx([d[1] for d in DJ], abs=1e-6)


@pytest.mark.slow
def test_translation_then_classification_and_reuse(models):
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    cls, tr = models
    op = make(hf_model=cls, zh_to_en_hf_model=tr, label_key="intent", score_key="p")
    # independent reference: translate each query alone with generate(), then classify it alone
    tok = AutoTokenizer.from_pretrained(tr)
    m = AutoModelForSeq2SeqLM.from_pretrained(tr).eval()
    want_tr = []
    with torch.no_grad():
        for q in QUERIES[:4]:
            enc = tok([q], return_tensors="pt")
            enc.pop("token_type_ids")
            want_tr.append(tok.decode(m.generate(**enc)[0], skip_special_tokens=True))
    assert op._translate(QUERIES[:4]) == want_tr
    plain = make(hf_model=cls, zh_to_en_hf_model=None, label_key="intent", score_key="p")
    want = run_ops_on_rows([plain], [{"query": t} for t in want_tr])
    rows = [{"query": q} for q in QUERIES[:4]] + [{"query": "x", Fields.meta: {"intent": "kept", "p": 1.0}}]
    out = run_ops_on_rows([op], rows)
    assert [r[Fields.meta]["intent"] for r in out[:4]] == [r[Fields.meta]["intent"] for r in want]
    assert [r[Fields.meta]["p"] for r in out[:4]] == pytest.approx([r[Fields.meta]["p"] for r in want], abs=1e-6)
    assert out[4][Fields.meta] == {"intent": "kept", "p": 1.0}
    assert [r["query"] for r in out] == [r["query"] for r in rows]  # the query itself is not changed
