import pytest

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS


def make(**kw):
    return OPERATORS.get("range_specified_field_selector")(**kw)


# values from Data-Juicer 1.6.1 (kept samples come largest value first, ties in sample order)
@pytest.mark.parametrize("kw,expected", [
    (dict(field_key="score", lower_percentile=0.2, upper_percentile=0.8), [0, 2, 5, 9, 1, 7]),
    (dict(field_key="score", lower_rank=2, upper_rank=5), [0, 1, 7]),
    (dict(field_key="score", lower_percentile=0.3, lower_rank=1, upper_percentile=0.9, upper_rank=8), [0, 2, 5, 9, 1]),
    (dict(field_key="meta.q", lower_percentile=0.1, upper_percentile=0.7), [2, 0, 3, 5, 4, 1]),
    (dict(field_key="meta.n", lower_rank=1, upper_rank=9), [2, 0, 5, 7, 9, 4, 1, 3]),
    (dict(field_key="meta.lst", lower_percentile=0.0, upper_percentile=1.0), [5, 2, 7, 4, 0, 3, 6, 9, 1, 8]),
    (dict(field_key="s", lower_rank=1, upper_percentile=0.6), [0, 1, 4, 5, 6]),
    (dict(field_key="meta.i", lower_rank=20, upper_percentile=0.5), []),
    (dict(field_key="score", lower_percentile=0.5, upper_percentile=0.2), []),
])
def test_matches_data_juicer(sel_dataset, ids, kw, expected):
    assert ids(make(**kw).process(sel_dataset)) == expected


# values from Data-Juicer 1.6.1
@pytest.mark.parametrize("kw,expected", [
    (dict(field_key="m.s", lower_rank=1, upper_rank=7), [1, 6, 2, 0, 3, 4]),
    (dict(field_key="f", lower_percentile=0.25, upper_percentile=1.0), [4, 2, 3, 0, 1, 6]),
])
def test_nan_like_data_juicer(float_dataset, ids, kw, expected):
    assert ids(make(**kw).process(float_dataset)) == expected


def test_nulls_rank_lowest(ids):
    ds = DJDataset.from_rows([{"text": f"t{i}", "v": v} for i, v in enumerate([3, None, 1, 2])])
    # values from Data-Juicer 1.6.1
    assert ids(make(field_key="v", lower_rank=1, upper_rank=3).process(ds)) == [3, 2]


def test_needs_both_bounds(sel_dataset):
    assert make(field_key="score", lower_rank=1).process(sel_dataset) is sel_dataset
    assert make(field_key="score", upper_percentile=0.5).process(sel_dataset) is sel_dataset
    assert make(lower_rank=1, upper_rank=2).process(sel_dataset) is sel_dataset


def test_missing_field_is_a_clear_error(sel_dataset):
    with pytest.raises(ValueError, match="'meta' has no field 'zz'"):
        make(field_key="meta.zz", lower_rank=1, upper_rank=2).process(sel_dataset)
