import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields


def make(**kw):
    return OPERATORS.get("text_length_filter")(**kw)


def test_keeps_inside_range_and_records_stat():
    rows = [{"text": "a" * 5}, {"text": "b" * 10}, {"text": "c" * 20}, {"text": ""}, {"text": "中文字符测试文本十个字"}]
    out = run_ops_on_rows([make(min_len=10, max_len=15)], rows)
    assert [r["text"] for r in out] == ["b" * 10, "中文字符测试文本十个字"]
    assert [r[Fields.stats]["text_len"] for r in out] == [10, 11]


@pytest.mark.parametrize("kw,expected", [
    ({"min_closed_interval": False}, ["c" * 20]),
    ({"reversed_range": True}, ["a" * 5, "b" * 10]),  # the bound itself stays kept, as in Data-Juicer
])
def test_interval_options(kw, expected):
    rows = [{"text": "a" * 5}, {"text": "b" * 10}, {"text": "c" * 20}]
    assert [r["text"] for r in run_ops_on_rows([make(min_len=10, **kw)], rows)] == expected


def test_reuses_existing_stat():
    rows = [{"text": "short", Fields.stats: {"text_len": 50}}]
    assert len(run_ops_on_rows([make(min_len=10)], rows)) == 1
