from importlib.util import find_spec

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

pytestmark = pytest.mark.skipif(not (find_spec("torch") and find_spec("transformers")),
                                reason="needs torch and transformers")

from tests.ops.hf_tiny_models import tiny_classifier

OP = "query_topic_detection_mapper"
QUERIES = ["What time does the store open?", "I hate this product, it broke after one day.",
           "今天天气怎么样？", "Stocks rallied after the earnings report 📈", "", "tell me a joke " * 20]
# values from Data-Juicer 1.6.1 on the same tiny classifier, zh_to_en_hf_model=None
DJ = [("neu", 0.5830817222595215), ("neu", 0.49552640318870544), ("neu", 0.48460131883621216),
      ("neu", 0.44906026124954224), ("neg", 0.4218461513519287), ("neg", 0.39894771575927734)]


def make(**kw):
    return OPERATORS.get(OP)(**kw)


def test_defaults_and_missing_model(tmp_path):
    import inspect

    params = inspect.signature(OPERATORS.get(OP).__init__).parameters
    assert params["label_key"].default == "query_topic_label"
    assert params["score_key"].default == "query_topic_label_score"
    with pytest.raises(FileNotFoundError, match="no-such/model"):
        make(hf_model="no-such/model", zh_to_en_hf_model=None)


@pytest.mark.slow
def test_matches_data_juicer(tmp_path):
    cls = tiny_classifier(tmp_path / "cls", ["neg", "neu", "pos"])
    out = run_ops_on_rows([make(hf_model=cls, zh_to_en_hf_model=None)], [{"query": q} for q in QUERIES])
    got = [(r[Fields.meta]["query_topic_label"], r[Fields.meta]["query_topic_label_score"]) for r in out]
    assert [g[0] for g in got] == [d[0] for d in DJ]
    assert [g[1] for g in got] == pytest.approx([d[1] for d in DJ], abs=1e-6)
