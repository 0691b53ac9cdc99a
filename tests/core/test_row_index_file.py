"""The HF backend's row-index column (``Fields.row_index``, for the error ledger) is memory-mapped from a
small Arrow file beside the loaded data's cache file, instead of a numpy array in the driver's heap that
every forked pass worker counted again; in memory as before where the data has no cache file."""
import json
import os

import datasets
import pyarrow as pa
import pytest
import yaml

from data_juicer.cli.process import main
from data_juicer.core import loader as loader_mod
from data_juicer.core.backends import hf as hf_mod
from data_juicer.core.loader import Loader, SourceSpec
from data_juicer.utils.constant import Fields
from tests.conftest import read_jsonl
from tests.core.test_executor_failures import CUSTOM_OP, _job_dir


@pytest.fixture
def streamed(monkeypatch):
    monkeypatch.setattr(loader_mod, "SMALL_BYTES", 0)  # every JSONL streamed into a cached Arrow file
    monkeypatch.setattr(loader_mod, "STREAM_BLOCK_BYTES", 256)
    monkeypatch.setattr(loader_mod, "SCHEMA_SAMPLE_BYTES", 512)
    monkeypatch.setattr(hf_mod, "ROW_INDEX_BATCH", 16)
    yield
    loader_mod._join_prefetch()


def _load(tmp_path, n=60):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"text {i} " * 3}) + "\n" for i in range(n)))
    return Loader(text_keys=["text"], cache_dir=str(tmp_path / "c")).load([SourceSpec(str(path))]).dataset


def test_row_index_is_mapped_from_a_file(tmp_path, streamed):
    ds = _load(tmp_path)
    out = hf_mod._add_row_index(ds)
    folder = os.path.dirname(ds.cache_files[0]["filename"])
    index_file = os.path.join(folder, "dj-row-index-60.arrow")
    assert [f["filename"] for f in out.cache_files] == [ds.cache_files[0]["filename"], index_file]
    col = out.data.table.column(Fields.row_index)
    assert col.type == pa.int64() and [len(c) for c in col.chunks] == [16, 16, 16, 12]
    assert out[Fields.row_index] == list(range(60))
    assert out.features[Fields.row_index] == datasets.Value("int64")
    assert out[59] == {"id": "d59", "text": "text 59 text 59 text 59 ", Fields.row_index: 59}
    # the same dataset (values, features, fingerprint) as the column given in memory
    mem = ds.add_column(Fields.row_index, list(range(60)))
    assert out.data.table.equals(mem.data.table) and out.features == mem.features
    assert out._fingerprint == hf_mod._add_row_index(ds)._fingerprint  # the file is reused
    assert sorted(os.listdir(folder)) == ["data.arrow", "dj-row-index-60.arrow"]  # no temporary file left


def test_in_memory_or_selected_data_gets_the_column_in_memory(tmp_path, streamed):
    small = datasets.Dataset.from_dict({"text": ["a", "b", "c"]})
    out = hf_mod._add_row_index(small)
    assert out.cache_files == [] and out[Fields.row_index] == [0, 1, 2]
    ds = _load(tmp_path).select([5, 3, 1])  # a row selection: numbered in its own order, in memory
    out = hf_mod._add_row_index(ds)
    assert out[Fields.row_index] == [0, 1, 2] and out["id"] == ["d5", "d3", "d1"]
    assert not any(f.startswith("dj-row-index") for f in os.listdir(os.path.dirname(ds.cache_files[0]["filename"])))


def test_unwritable_folder_falls_back_to_memory(tmp_path, streamed, monkeypatch):
    ds = _load(tmp_path)

    def refuse(*a, **k):
        raise PermissionError("read-only")

    monkeypatch.setattr(pa, "OSFile", refuse)
    out = hf_mod._add_row_index(ds)
    assert out[Fields.row_index] == list(range(60)) and len(out.cache_files) == 1


def test_lean_load_maps_the_row_index_from_a_file(tmp_path, streamed):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"text {i} " * 3}) + "\n" for i in range(60)))
    ds = Loader(text_keys=["text"], cache_dir=str(tmp_path / "c")).load_lean([SourceSpec(str(path))]).dataset
    out = hf_mod._add_lean_row_index(ds)
    assert os.path.exists(os.path.join(os.path.dirname(ds.path), "dj-row-index-60.arrow"))
    col = out.column(Fields.row_index)
    assert col.type == pa.int64() and [len(c) for c in col.chunks] == [16, 16, 16, 12]  # the file's batches
    assert col.to_pylist() == list(range(60)) and out.column_names == ["id", "text", Fields.row_index]
    assert out.slice_table(59, 1).to_pylist() == [{"id": "d59", "text": "text 59 text 59 text 59 ",
                                                   Fields.row_index: 59}]
    hf = out.to_hf()  # a step outside the lean surface sees the same column
    assert hf[Fields.row_index] == list(range(60)) and hf.features[Fields.row_index] == datasets.Value("int64")


@pytest.mark.parametrize("lean", ["0", "1"])
def test_ledger_index_of_a_streamed_input(tmp_path, streamed, monkeypatch, lean):
    monkeypatch.setenv("DJ_LEAN", lean)  # either path's load adds the row index
    op_file = tmp_path / "my_ops.py"
    op_file.write_text(CUSTOM_OP)
    rows = [{"id": f"s{i}", "text": ("BOOM " if i in (7, 41) else "fine ") + f"text number {i}"} for i in range(50)]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = {"project_name": "t", "np": 1, "export_path": str(tmp_path / "out" / "result.jsonl"),
           "dataset_path": str(data), "ds_cache_dir": str(tmp_path / "hf"),
           "custom_operator_paths": [str(op_file)], "process": [{"explode_on_marker_mapper": None}]}
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(cfg))
    assert main(["--config", str(recipe)]) == 0
    assert len(read_jsonl(tmp_path / "out" / "result.jsonl")) == 48
    ledger = read_jsonl(_job_dir(tmp_path) / "errors.jsonl")
    assert sorted((e["id"]["id"], e["index"]) for e in ledger) == [("s41", 41), ("s7", 7)]
    assert [p.name for p in (tmp_path / "hf").rglob("dj-row-index-*")] == ["dj-row-index-50.arrow"]
