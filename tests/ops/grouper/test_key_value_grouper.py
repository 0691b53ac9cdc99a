import pytest
from grouper_data import E2E_ROWS, ROWS, as_rows

from data_juicer.cli.process import main
from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from tests.conftest import read_jsonl


def make(**kw):
    return OPERATORS.get("key_value_grouper")(**kw)


def groups(keys):
    out = as_rows(make(group_by_keys=keys).process(DJDataset.from_rows(ROWS)))
    return [[m["n"] for m in g["meta"]] for g in out]


# values from Data-Juicer 1.6.1: the samples (by meta.n) of each group, groups in order of first sample
@pytest.mark.parametrize("keys, expected", [
    (None, [[1, 3], [2], [4], [5]]),  # the text key
    (["meta.lang"], [[1, 3], [2, 4], [5]]),
    (["meta.lang", "score"], [[1, 3], [2], [4], [5]]),
    (["score", "meta.lang", "score"], [[1, 3], [2], [4], [5]]),
    (["tags"], [[1, 4, 5], [2], [3]]),
    (["tags.0"], [[1, 4, 5], [2], [3]]),  # list index; [] has none: None
    (["nope"], [[1, 2, 3, 4, 5]]),  # missing everywhere: one group
    (["meta.nope.deeper"], [[1, 2, 3, 4, 5]]),
    (["__dj__stats__.len"], [[1, 3, 5], [2, 4]]),
])
def test_groups_match_data_juicer(keys, expected):
    assert groups(keys) == expected


def test_batched_sample_holds_all_fields_as_lists():
    out = as_rows(make(group_by_keys=["meta.lang"]).process(DJDataset.from_rows(ROWS)))
    # values from Data-Juicer 1.6.1
    assert out[1] == {"text": ["b", "中文"], "meta": [{"lang": "zh", "n": 2}, {"lang": "zh", "n": 4}],
                      "tags": [[], ["x"]], "score": [2.5, None], "__dj__stats__": [{"len": 2}, {"len": 2}]}


def test_values_compare_by_repr():
    rows = [{"text": "x", "v": 1.0}, {"text": "y", "v": 1.0}, {"text": "z", "v": float("nan")},
            {"text": "w", "v": float("nan")}, {"text": "u", "v": -0.0}, {"text": "t", "v": 0.0}]
    out = as_rows(make(group_by_keys=["v"]).process(DJDataset.from_rows(rows)))
    assert [g["text"] for g in out] == [["x", "y"], ["z", "w"], ["u"], ["t"]]


def test_text_key_default_and_empty_dataset():
    assert make(text_key="content").group_by_keys == ["content"]
    empty = DJDataset.from_rows([])
    assert make().process(empty) is empty


def test_bad_keys_param():
    with pytest.raises(ValueError, match="list of keys"):
        make(group_by_keys="meta.lang")


def test_end_to_end_with_dj_process(make_recipe, tmp_path):
    recipe = make_recipe(E2E_ROWS, [{"key_value_grouper": {"group_by_keys": ["meta.lang"]}}])
    assert main(["--config", recipe]) == 0
    # values from Data-Juicer 1.6.1 (its dj-process on the same recipe)
    assert read_jsonl(tmp_path / "out" / "result.jsonl") == [
        {"id": [0, 2], "text": ["hello", "world"], "meta": [{"lang": "en"}, {"lang": "en"}]},
        {"id": [1], "text": ["你好"], "meta": [{"lang": "zh"}]},
        {"id": [3], "text": ["😀"], "meta": [{"lang": None}]}]
