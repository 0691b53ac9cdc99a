import pytest

from data_juicer.ops import OPERATORS


def make(**kw):
    return OPERATORS.get("tags_specified_field_selector")(**kw)


# values from Data-Juicer 1.6.1 (kept in sample order; equality as in Python: 2 == 2.0)
@pytest.mark.parametrize("kw,expected", [
    (dict(field_key="meta.lang", target_tags=["en", "zh"]), [0, 1, 2, 5, 6, 9]),
    (dict(field_key="s", target_tags=["b", "B", "zz"]), [0, 4, 6, 9]),
    (dict(field_key="score", target_tags=[3, 5]), [0, 2, 5, 8, 9]),
    (dict(field_key="meta.q", target_tags=[0.5, 2]), [0, 2, 3, 5, 9]),
    (dict(field_key="meta.lang", target_tags=[None, "fr"]), [3, 4, 7]),
    (dict(field_key="meta.lang", target_tags=[]), []),
])
def test_matches_data_juicer(sel_dataset, ids, kw, expected):
    assert ids(make(**kw).process(sel_dataset)) == expected


def test_signed_zero_matches(float_dataset, ids):
    # values from Data-Juicer 1.6.1
    assert ids(make(field_key="f", target_tags=[0, 1.5]).process(float_dataset)) == [0, 1, 3, 5, 6]


def test_nothing_to_do(sel_dataset):
    assert make(target_tags=["en"]).process(sel_dataset) is sel_dataset


def test_clear_errors(sel_dataset):
    with pytest.raises(ValueError, match="target_tags is not set"):
        make(field_key="meta.lang").process(sel_dataset)
    with pytest.raises(ValueError, match="must hold strings, numbers or nulls"):
        make(field_key="meta.lst", target_tags=["a"]).process(sel_dataset)
    with pytest.raises(ValueError, match="needs a column 'x'"):
        make(field_key="x", target_tags=["a"]).process(sel_dataset)
