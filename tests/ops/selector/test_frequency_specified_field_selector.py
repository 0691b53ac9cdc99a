import pytest

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS


def make(**kw):
    return OPERATORS.get("frequency_specified_field_selector")(**kw)


# values from Data-Juicer 1.6.1 (grouped by value, most frequent first, equal counts in order of
# first appearance; null is a value)
@pytest.mark.parametrize("kw,expected", [
    (dict(field_key="meta.lang", topk=2), [0, 2, 6, 9, 1, 5]),
    (dict(field_key="meta.lang", top_ratio=0.5), [0, 2, 6, 9, 1, 5]),
    (dict(field_key="meta.lang", topk=3, reverse=False), [4, 8, 1, 5]),
    (dict(field_key="score", topk=2), [0, 2, 5, 9, 1, 7]),
    (dict(field_key="score", top_ratio=0.4, topk=1), [0, 2, 5, 9]),
    (dict(field_key="meta.q", topk=3), [0, 3, 5, 1, 7, 2, 9]),
    (dict(field_key="meta.q", topk=3, reverse=False), [4, 6, 8]),
    (dict(field_key="s", top_ratio=1.0, reverse=False), [2, 3, 5, 6, 8, 1, 7, 0, 4, 9]),
    (dict(field_key="meta.i", topk=100), [0, 2, 5, 9, 1, 4, 7, 3, 6, 8]),
])
def test_matches_data_juicer(sel_dataset, ids, kw, expected):
    assert ids(make(**kw).process(sel_dataset)) == expected


def test_floats_group_like_python(float_dataset, ids):
    # values from Data-Juicer 1.6.1: 0.0 and -0.0 are one value, every NaN is its own
    assert ids(make(field_key="f", topk=10).process(float_dataset)) == [0, 1, 6, 3, 5, 2, 4, 7]
    assert ids(make(field_key="m.f", topk=2).process(float_dataset)) == [0, 1, 6, 3, 5]


@pytest.mark.parametrize("values,kw,expected", [
    ([3, None, 1, 2], dict(topk=1, reverse=False), [0]),
    ([True, False, True, None, None, None], dict(topk=1), [3, 4, 5]),
])
def test_nulls_and_bools(ids, values, kw, expected):
    # values from Data-Juicer 1.6.1
    ds = DJDataset.from_rows([{"text": f"t{i}", "v": v} for i, v in enumerate(values)])
    assert ids(make(field_key="v", **kw).process(ds)) == expected


def test_nothing_to_do(sel_dataset):
    assert make(topk=1).process(sel_dataset) is sel_dataset
    assert make(field_key="score").process(sel_dataset) is sel_dataset


def test_non_scalar_field_is_a_clear_error(sel_dataset):
    with pytest.raises(ValueError, match="must hold strings, numbers or nulls"):
        make(field_key="meta.lst", topk=1).process(sel_dataset)
