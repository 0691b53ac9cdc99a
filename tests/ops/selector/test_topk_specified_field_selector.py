import pytest

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS


def make(**kw):
    return OPERATORS.get("topk_specified_field_selector")(**kw)


# values from Data-Juicer 1.6.1 (equal values keep sample order; a top-level field is compared raw,
# a nested one as a number: strings parsed, lists averaged, unreadable values last)
@pytest.mark.parametrize("kw,expected", [
    (dict(field_key="score", topk=3), [3, 8, 0]),
    (dict(field_key="score", top_ratio=0.5), [3, 8, 0, 2, 5]),
    (dict(field_key="score", topk=4, reverse=False), [4, 6, 1, 7]),
    (dict(field_key="score", top_ratio=0.5, topk=2), [3, 8]),
    (dict(field_key="score", top_ratio=0.05), []),
    (dict(field_key="s", topk=4), [8, 0, 4, 9]),
    (dict(field_key="s", topk=4, reverse=False), [5, 2, 3, 6]),
    (dict(field_key="meta.q", topk=5), [6, 8, 2, 9, 0]),
    (dict(field_key="meta.q", topk=5, reverse=False), [4, 0, 3, 5, 2]),
    (dict(field_key="meta.n", topk=6), [6, 2, 0, 5, 7, 9]),
    (dict(field_key="meta.n", topk=6, reverse=False), [4, 7, 9, 0, 5, 2]),
    (dict(field_key="meta.lst", topk=6), [5, 2, 7, 4, 0, 3]),
    (dict(field_key="meta.lst", top_ratio=0.8, reverse=False), [3, 6, 9, 0, 4, 7, 2, 5]),
    (dict(field_key="meta.lang", topk=3), [0, 1, 2]),
    (dict(field_key="meta.i", topk=20), [8, 6, 3, 1, 4, 7, 0, 2, 5, 9]),
])
def test_matches_data_juicer(sel_dataset, ids, kw, expected):
    assert ids(make(**kw).process(sel_dataset)) == expected


# values from Data-Juicer 1.6.1 (NaN orders the way Python's heapq leaves it)
@pytest.mark.parametrize("kw,expected", [
    (dict(field_key="f", topk=8), [2, 4, 7, 3, 5, 0, 1, 6]),
    (dict(field_key="f", topk=8, reverse=False), [0, 1, 2, 6, 3, 4, 5, 7]),
    (dict(field_key="m.s", topk=8), [1, 5, 7, 6, 2, 0, 3, 4]),
    (dict(field_key="m.f", topk=5, reverse=False), [2, 4, 0, 1, 3]),
])
def test_nan_and_signed_zero_like_data_juicer(float_dataset, ids, kw, expected):
    assert ids(make(**kw).process(float_dataset)) == expected


def test_nothing_to_do(sel_dataset):
    assert make(topk=2).process(sel_dataset) is sel_dataset
    assert make(field_key="score").process(sel_dataset) is sel_dataset
    assert make(field_key="score", top_ratio=0.0).process(sel_dataset) is sel_dataset


def test_clear_errors(sel_dataset):
    with pytest.raises(ValueError, match="needs a column 'nope'"):
        make(field_key="nope.x", topk=2).process(sel_dataset)
    with pytest.raises(ValueError, match="'meta' has no field 'zz'"):
        make(field_key="meta.zz", topk=2).process(sel_dataset)
    nulls = DJDataset.from_rows([{"text": f"t{i}", "v": v} for i, v in enumerate([3, None, 1])])
    with pytest.raises(ValueError, match="cannot be ordered"):  # Data-Juicer raises TypeError
        make(field_key="v", topk=2).process(nulls)
