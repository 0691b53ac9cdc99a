import pytest

from data_juicer.core.runner import FusedRun, OpError, run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields


def make(**kw):
    return OPERATORS.get("specified_field_filter")(**kw)


def rows():
    return [
        {"text": "a", "num": 5, "meta": {"lang": "en", "tags": ["x", "y"]}},
        {"text": "b", "num": 0, "meta": {"lang": "zh", "tags": ["x"]}},
        {"text": "c", "num": None, "meta": {"lang": None, "tags": []}},
        {"text": "d", "num": -3, "meta": {"lang": "en", "tags": ["z"]}},
        {"text": "", "num": 30, "meta": {"lang": "fr", "tags": ["y", "x"]}},
        {"text": "中文😀", "num": 10, "meta": {"lang": "EN", "tags": ["x", "q"]}},
    ]


# values from Data-Juicer 1.6.1: (params, kept texts, stat of each kept sample)
@pytest.mark.parametrize("kw,texts,stats", [
    (dict(field_key="meta.lang", target_value=["en", "zh"]), ["a", "b", "d"], ["en", "zh", "en"]),
    (dict(field_key="meta.tags", target_value=["x", "y"]), ["a", "b", "c", ""], [["x", "y"], ["x"], [], ["y", "x"]]),
    (dict(field_key="num", target_value=[5, 0, None]), ["a", "b", "c"], [5, 0, None]),
    (dict(field_key="num", target_value=[5.0, 10]), ["a", "中文😀"], [5, 10]),
    (dict(field_key="meta.lang", target_value=["en"], reversed_range=True), ["b", "c", "", "中文😀"],
     ["zh", None, "fr", "EN"]),
    (dict(field_key="text", target_value=[]), ["a", "b", "c", "d", "", "中文😀"], ["a", "b", "c", "d", "", "中文😀"]),
])
def test_matches_data_juicer(kw, texts, stats):
    out = run_ops_on_rows([make(**kw)], rows())
    assert [r["text"] for r in out] == texts
    assert [r[Fields.stats] for r in out] == [{kw["field_key"]: s} for s in stats]


def test_empty_field_key_keeps_everything_without_stats():
    out = run_ops_on_rows([make(target_value=["en"])], rows())
    assert len(out) == 6 and all(r[Fields.stats] == {} for r in out)


def test_reuses_existing_stat():
    out = run_ops_on_rows([make(field_key="meta.lang", target_value=["en"])],
                          [{"text": "x", "meta": {"lang": "zh"}, Fields.stats: {"meta.lang": "en"}}])
    assert [r["text"] for r in out] == ["x"]


def test_missing_field_is_a_per_sample_error():
    op = make(field_key="meta.lang", target_value=["en"])
    batch = {"text": ["ok", "bad"], "meta": [{"lang": "en"}, {"other": 1}]}
    kept, failed = FusedRun([op], mark_errors=False).apply(batch)
    assert kept["text"] == ["ok"] and failed["text"] == ["bad"]
    with pytest.raises(OpError, match="no field 'lang' in 'meta.lang'"):
        run_ops_on_rows([make(field_key="meta.lang", target_value=["en"], skip_op_error=False)],
                        [{"text": "bad", "meta": {"other": 1}}])
