"""Loader.prefetch: the large-JSONL read started in a background thread gives the load the same
dataset as reading in the foreground; a failed read falls back to the builder as before."""
import json
import os

import datasets
import pytest

from data_juicer.core import loader as loader_mod
from data_juicer.core.loader import DataLoadError, Loader, SourceSpec


@pytest.fixture
def stream_small(monkeypatch):
    monkeypatch.setattr(loader_mod, "SMALL_BYTES", 0)
    monkeypatch.setattr(loader_mod, "STREAM_BLOCK_BYTES", 256)
    monkeypatch.setattr(loader_mod, "SCHEMA_SAMPLE_BYTES", 512)  # the schema of the first few lines
    yield
    loader_mod._join_prefetch()


def _write(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


ROWS = [{"id": f"d{i}", "text": f"línea {i} " * (i % 7 + 1), "meta": {"n": i}} for i in range(60)]


def _loader(cache, **kw):
    return Loader(text_keys=["text"], cache_dir=str(cache), **kw)


def test_prefetched_equals_foreground(tmp_path, stream_small):
    path = _write(tmp_path / "a.jsonl", ROWS)
    want = _loader(tmp_path / "c1").load([SourceSpec(str(path))]).dataset
    ld = _loader(tmp_path / "c2")
    assert ld.prefetch([SourceSpec(str(path))]) is True
    assert ld.prefetch([SourceSpec(str(path))]) is False  # already running (or done)
    got = ld.load([SourceSpec(str(path))]).dataset
    assert not loader_mod._PREFETCH
    assert got.data.table.equals(want.data.table) and got.features == want.features
    assert got["id"][:3] == ["d0", "d1", "d2"] and got.num_rows == 60
    assert [p.name for p in (tmp_path / "c2" / "dj_jsonl").rglob("*")  if p.is_file()] == ["data.arrow"]


def test_failed_prefetch_falls_back_to_builder(tmp_path, stream_small):
    rows = ROWS + [{"id": "late", "text": "x", "meta": {"n": 1}, "extra": 5}]  # a field first seen late
    path = _write(tmp_path / "a.jsonl", rows)
    ld = _loader(tmp_path / "c")
    assert ld.prefetch([SourceSpec(str(path))]) is True
    got = ld.load([SourceSpec(str(path))]).dataset
    want = datasets.load_dataset("json", data_files=[str(path)], split="train", cache_dir=str(tmp_path / "b"))
    assert got.data.table.equals(want.data.table)
    assert got["extra"][-2:] == [None, 5]
    assert not list((tmp_path / "c" / "dj_jsonl").rglob("*.arrow*"))  # nothing half-written left


def test_bad_line_still_named(tmp_path, stream_small):
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:5]) + "{not json\n", encoding="utf-8")
    ld = _loader(tmp_path / "c")
    assert ld.prefetch([SourceSpec(str(path))]) is True
    with pytest.raises(DataLoadError, match="line 6"):
        ld.load([SourceSpec(str(path))])


def test_not_started_where_load_reads_otherwise(tmp_path, stream_small, monkeypatch):
    path = _write(tmp_path / "a.jsonl", ROWS)
    gz = tmp_path / "b.json"
    gz.write_text(json.dumps(ROWS[:2]))
    assert not _loader(tmp_path / "c", lenient=True).prefetch([SourceSpec(str(path))])
    assert not _loader(tmp_path / "c", load_kwargs={"x": 1}).prefetch([SourceSpec(str(path))])
    assert not _loader(tmp_path / "c").prefetch([SourceSpec(str(path)), SourceSpec(str(path))])
    assert not _loader(tmp_path / "c").prefetch([SourceSpec(str(gz))])
    assert not _loader(tmp_path / "c").prefetch([SourceSpec(str(tmp_path / "missing.jsonl"))])
    monkeypatch.setenv("DJ_PREFETCH", "0")
    assert not _loader(tmp_path / "c").prefetch([SourceSpec(str(path))])
    monkeypatch.setattr(loader_mod, "SMALL_BYTES", 16 << 20)
    monkeypatch.delenv("DJ_PREFETCH")
    assert not _loader(tmp_path / "c").prefetch([SourceSpec(str(path))])  # small: read in memory
    assert not loader_mod._PREFETCH


def test_other_cache_root_read_is_removed(tmp_path, stream_small, monkeypatch):
    path = _write(tmp_path / "a.jsonl", ROWS)
    monkeypatch.setattr(loader_mod, "_default_datasets_cache", lambda: str(tmp_path / "guess"))
    ld = Loader(text_keys=["text"], cache_dir=None)
    assert ld.prefetch([SourceSpec(str(path))]) is True
    ld.cache_dir = str(tmp_path / "real")  # the load looks elsewhere: the read ahead is not used
    got = ld.load([SourceSpec(str(path))]).dataset
    assert got.num_rows == 60
    assert not list((tmp_path / "guess").rglob("*.arrow"))
    assert len(list((tmp_path / "real").rglob("data.arrow"))) == 1


def test_default_cache_root_matches_datasets():
    assert os.path.abspath(loader_mod._default_datasets_cache()) == os.path.abspath(
        str(datasets.config.HF_DATASETS_CACHE))
