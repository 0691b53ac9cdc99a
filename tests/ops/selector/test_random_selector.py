import pytest

from data_juicer.config.recipe import ConfigError, validate_op
from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS


def make(**kw):
    return OPERATORS.get("random_selector")(**kw)


# values from Data-Juicer 1.6.1 (it shuffles with seed 42, so the selection is fixed)
@pytest.mark.parametrize("kw,expected", [
    (dict(select_ratio=0.5), [5, 6, 0, 7, 3]),
    (dict(select_num=3), [5, 6, 0]),
    (dict(select_ratio=0.5, select_num=2), [5, 6]),
    (dict(select_ratio=0.3, select_num=7), [5, 6, 0]),
    (dict(select_num=10), list(range(10))),
    (dict(select_num=13), [5, 6, 0, 7, 3, 2, 4, 9, 1, 8, 5, 6, 0]),
    (dict(select_num=25), [5, 6, 0, 7, 3, 2, 4, 9, 1, 8] * 2 + [5, 6, 0, 7, 3]),
    (dict(select_ratio=0.05), list(range(10))),  # rounds to 0 samples: the whole dataset is kept
    (dict(select_ratio=0.0, select_num=4), [5, 6, 0, 7]),
    (dict(select_num=1), [5]),
    (dict(select_ratio=1.0), list(range(10))),
    (dict(select_ratio=0.99), [5, 6, 0, 7, 3, 2, 4, 9, 1]),
])
def test_matches_data_juicer(sel_dataset, ids, kw, expected):
    assert ids(make(**kw).process(sel_dataset)) == expected


def test_matches_data_juicer_on_a_larger_dataset(ids):
    ds = DJDataset.from_rows([{"text": f"t{i}"} for i in range(1000)])
    # values from Data-Juicer 1.6.1
    assert ids(make(select_num=8).process(ds)) == [978, 933, 859, 916, 127, 608, 856, 260]
    assert ids(make(select_ratio=0.004).process(ds)) == [978, 933, 859, 916]


def test_nothing_to_do(sel_dataset):
    assert make().process(sel_dataset) is sel_dataset
    assert make(select_ratio=0.0).process(sel_dataset) is sel_dataset  # Data-Juicer raises TypeError here
    one = DJDataset.from_rows([{"text": "t0"}])
    assert make(select_num=1).process(one) is one


@pytest.mark.parametrize("params", [{"select_ratio": 1.5}, {"select_num": 0}])
def test_recipe_rejects_bad_params(params):
    with pytest.raises(ConfigError, match="random_selector"):
        validate_op("random_selector", OPERATORS.get("random_selector"), params, "recipe.yaml")
