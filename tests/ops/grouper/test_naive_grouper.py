from grouper_data import E2E_ROWS, ROWS, as_rows

from data_juicer.cli.process import main
from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from tests.conftest import read_jsonl


def make():
    return OPERATORS.get("naive_grouper")()


def test_whole_dataset_becomes_one_batched_sample():
    out = make().process(DJDataset.from_rows(ROWS))
    # values from Data-Juicer 1.6.1
    assert as_rows(out) == [{
        "text": ["a", "b", "a", "中文", "😀"],
        "meta": [{"lang": "en", "n": 1}, {"lang": "zh", "n": 2}, {"lang": "en", "n": 3}, {"lang": "zh", "n": 4},
                 {"lang": None, "n": 5}],
        "tags": [["x"], [], ["y", "z"], ["x"], ["x"]],
        "score": [1.0, 2.5, 1.0, None, 2.5],
        "__dj__stats__": [{"len": 1}, {"len": 2}, {"len": 1}, {"len": 2}, {"len": 1}],
    }]


def test_column_types_become_lists_of_the_same_type():
    ds = DJDataset.from_rows(ROWS)
    out = make().process(ds)
    for name in ds.column_names:
        assert out.arrow_column(name).type.value_type == ds.arrow_column(name).type


def test_empty_and_single():
    empty = DJDataset.from_rows([])
    assert make().process(empty) is empty
    assert as_rows(make().process(DJDataset.from_rows([{"text": ""}]))) == [{"text": [""]}]


def test_after_select_uses_the_selected_rows():
    ds = DJDataset.from_rows(ROWS).select([4, 0])
    assert as_rows(make().process(ds))[0]["text"] == ["😀", "a"]


def test_end_to_end_with_dj_process(make_recipe, tmp_path):
    recipe = make_recipe(E2E_ROWS, [{"naive_grouper": None}])
    assert main(["--config", recipe]) == 0
    # values from Data-Juicer 1.6.1 (its dj-process on the same recipe)
    assert read_jsonl(tmp_path / "out" / "result.jsonl") == [
        {"id": [0, 1, 2, 3], "text": ["hello", "你好", "world", "😀"],
         "meta": [{"lang": "en"}, {"lang": "zh"}, {"lang": "en"}, {"lang": None}]}]
