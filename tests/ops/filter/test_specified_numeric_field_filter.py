import pytest

from data_juicer.core.runner import OpError, run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields


def make(**kw):
    return OPERATORS.get("specified_numeric_field_filter")(**kw)


def rows():
    return [
        {"text": "a", "num": 5, "meta": {"score": 0.5, "n": "12"}},
        {"text": "b", "num": 0, "meta": {"score": 0.0, "n": "abc"}},
        {"text": "c", "num": None, "meta": {"score": None, "n": None}},
        {"text": "d", "num": -3, "meta": {"score": 2.5, "n": "3.5"}},
        {"text": "", "num": 30, "meta": {"score": -1.0, "n": " 7 "}},
        {"text": "中文😀", "num": 10, "meta": {"score": 1e9, "n": "0"}},
    ]


# values from Data-Juicer 1.6.1: (params, kept texts, stat of each kept sample).
# Data-Juicer reads a zero / empty value as "not a number", so 0 is dropped even inside the range.
@pytest.mark.parametrize("kw,texts,stats", [
    (dict(field_key="num", min_value=-5, max_value=10), ["a", "d", "中文😀"], [5, -3, 10]),
    (dict(field_key="meta.n", min_value=0, max_value=10), ["d", "", "中文😀"], ["3.5", " 7 ", "0"]),
    (dict(field_key="meta.score", min_value=0.5, max_value=1e10, min_closed_interval=False), ["d", "中文😀"],
     [2.5, 1e9]),
    (dict(field_key="meta.score"), ["a", "d", "", "中文😀"], [0.5, 2.5, -1.0, 1e9]),
])
def test_matches_data_juicer(kw, texts, stats):
    out = run_ops_on_rows([make(**kw)], rows())
    assert [r["text"] for r in out] == texts
    assert [r[Fields.stats] for r in out] == [{kw["field_key"]: s} for s in stats]


def test_reversed_range_keeps_bounds_like_data_juicer():
    # values from Data-Juicer 1.6.1: 10 (== max_value) is kept; non-numbers are still dropped
    out = run_ops_on_rows([make(field_key="num", min_value=-5, max_value=10, reversed_range=True)], rows())
    assert [r["text"] for r in out] == ["", "中文😀"]


def test_reversed_range_drops_non_numbers():
    out = run_ops_on_rows([make(field_key="num", min_value=-1, max_value=1, reversed_range=True)], rows())
    assert "b" not in [r["text"] for r in out] and "c" not in [r["text"] for r in out]


def test_empty_field_key_keeps_everything():
    assert len(run_ops_on_rows([make(min_value=100)], rows())) == 6


def test_unreadable_value_type_is_an_error():
    with pytest.raises(OpError, match="cannot be read as a number"):
        run_ops_on_rows([make(field_key="v", skip_op_error=False)], [{"text": "x", "v": [1, 2]}])
