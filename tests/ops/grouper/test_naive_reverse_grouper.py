import pytest
from grouper_data import E2E_ROWS, ROWS, as_rows

from data_juicer.cli.process import main
from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from tests.conftest import read_jsonl


def make(**kw):
    return OPERATORS.get("naive_reverse_grouper")(**kw)


def grouped():
    return OPERATORS.get("key_value_grouper")(group_by_keys=["meta.lang"]).process(DJDataset.from_rows(ROWS))


# values from Data-Juicer 1.6.1: (text, meta.n, tags, score) of the unbatched samples
UNBATCHED = [("a", 1, ["x"], 1.0), ("a", 3, ["y", "z"], 1.0), ("b", 2, [], 2.5), ("中文", 4, ["x"], None),
             ("😀", 5, ["x"], 2.5)]


def summary(ds):
    return [(r["text"], r["meta"]["n"], r["tags"], r["score"]) for r in as_rows(ds)]


def test_unbatches_in_order():
    out = make().process(grouped())
    assert summary(out) == UNBATCHED
    assert out.column_names == ["text", "meta", "tags", "score", "__dj__stats__"]
    assert as_rows(out)[3] == {"text": "中文", "meta": {"lang": "zh", "n": 4}, "tags": ["x"], "score": None,
                               "__dj__stats__": {"len": 2}}


def test_round_trip_restores_types():
    ds = DJDataset.from_rows(ROWS)
    out = make().process(OPERATORS.get("naive_grouper")().process(ds))
    assert as_rows(out) == ROWS
    assert [out.arrow_column(c).type for c in ds.column_names] == [ds.arrow_column(c).type for c in ds.column_names]


def test_batch_meta_is_exported_and_dropped(tmp_path):
    rows = [dict(r, __dj__batch_meta__={"k": i, "s": "中"}) for i, r in enumerate(as_rows(grouped()))]
    path = tmp_path / "sub" / "dir" / "meta.jsonl"
    out = make(batch_meta_export_path=str(path)).process(DJDataset.from_rows(rows))
    assert summary(out) == UNBATCHED and "__dj__batch_meta__" not in out.column_names
    # values from Data-Juicer 1.6.1
    assert path.read_text(encoding="utf-8") == '{"k": 0, "s": "中"}\n{"k": 1, "s": "中"}\n{"k": 2, "s": "中"}\n'


def test_batch_meta_dropped_without_path_and_empty_file_without_meta(tmp_path):
    rows = [{"text": ["a", "b"], "__dj__batch_meta__": {"k": 1}}]
    out = make().process(DJDataset.from_rows(rows))
    assert as_rows(out) == [{"text": "a"}, {"text": "b"}]
    path = tmp_path / "m.jsonl"
    make(batch_meta_export_path=str(path)).process(DJDataset.from_rows([{"text": ["a"]}]))
    assert path.read_text() == ""


def test_empty_dataset_and_empty_groups():
    empty = DJDataset.from_rows([])
    assert make().process(empty) is empty
    out = make().process(DJDataset.from_rows([{"text": [], "n": []}, {"text": ["x"], "n": [1]}]))
    assert as_rows(out) == [{"text": "x", "n": 1}]


def test_not_batched_samples_give_clear_errors():
    with pytest.raises(ValueError, match="'n' .* is not a list"):
        make().process(DJDataset.from_rows([{"text": ["a"], "n": 1}]))
    with pytest.raises(ValueError, match="'n' holds 1 values but 'text' holds 2"):
        make().process(DJDataset.from_rows([{"text": ["a", "b"], "n": [1]}]))
    with pytest.raises(ValueError, match="file path"):
        make(batch_meta_export_path=3)


def test_end_to_end_with_dj_process(make_recipe, tmp_path):
    meta = tmp_path / "meta" / "batch_meta.jsonl"
    recipe = make_recipe(E2E_ROWS, [{"key_value_grouper": {"group_by_keys": ["meta.lang"]}},
                                    {"naive_reverse_grouper": {"batch_meta_export_path": str(meta)}},
                                    {"text_length_filter": {"min_len": 2}}])
    assert main(["--config", recipe]) == 0
    # values from Data-Juicer 1.6.1 (its dj-process on the same recipe)
    assert read_jsonl(tmp_path / "out" / "result.jsonl") == [
        {"id": 0, "text": "hello", "meta": {"lang": "en"}}, {"id": 2, "text": "world", "meta": {"lang": "en"}},
        {"id": 1, "text": "你好", "meta": {"lang": "zh"}}]
    assert meta.read_text() == ""
