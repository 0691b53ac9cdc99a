import pytest

from data_juicer.core.runner import OpError, run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields


def make(**kw):
    return OPERATORS.get("suffix_filter")(**kw)


def rows():
    pairs = [("a", ".jsonl"), ("b", ".txt"), ("c", ".md"), ("d", ".jsonl"), ("", "txt"), ("中文😀", ".jsonl")]
    return [{"text": t, Fields.suffix: s} for t, s in pairs]


# values from Data-Juicer 1.6.1
@pytest.mark.parametrize("kw,texts", [
    (dict(suffixes=[".jsonl"]), ["a", "d", "中文😀"]),
    (dict(suffixes=".txt"), ["b"]),
    (dict(suffixes=[".jsonl", "txt"]), ["a", "d", "", "中文😀"]),
    (dict(suffixes=[]), ["a", "b", "c", "d", "", "中文😀"]),
    (dict(suffixes=[".jsonl"], reversed_range=True), ["b", "c", ""]),
])
def test_matches_data_juicer(kw, texts):
    out = run_ops_on_rows([make(**kw)], rows())
    assert [r["text"] for r in out] == texts
    assert all(r[Fields.stats] == {} for r in out)


def test_none_suffixes_keep_everything():
    assert len(run_ops_on_rows([make(suffixes=None)], rows())) == 6


def test_missing_suffix_field_is_a_clear_error():
    with pytest.raises(OpError, match="__dj__suffix__"):
        run_ops_on_rows([make(suffixes=[".txt"], skip_op_error=False)], [{"text": "a"}])
