"""Loader: larger JSONL streamed by pyarrow into one cached Arrow file (``_stream_large_jsonl``) gives
the datasets json builder's table; any block that does not fit the first one's schema, or a bad
line, goes to the builder as before. The size limits are lowered so small files take the path."""
import json
import os

import datasets
import pytest

from data_juicer.core import loader as loader_mod
from data_juicer.core.loader import DataLoadError, Loader, SourceSpec


@pytest.fixture
def stream_small(monkeypatch):
    monkeypatch.setattr(loader_mod, "SMALL_BYTES", 0)  # nothing is "small": large-file paths only
    monkeypatch.setattr(loader_mod, "STREAM_BLOCK_BYTES", 256)
    monkeypatch.setattr(loader_mod, "SCHEMA_SAMPLE_BYTES", 512)  # the schema of the first few lines


def _write(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _load(path, cache):
    return Loader(text_keys=["text"], cache_dir=str(cache)).load([SourceSpec(str(path))]).dataset


def _builder(path, cache):
    return datasets.load_dataset("json", data_files=[str(path)], split="train", cache_dir=str(cache / "b"))


def _streamed_files(cache):
    root = cache / "dj_jsonl"
    return sorted(p.name for p in root.rglob("*.arrow")) if root.exists() else []


ROWS = [{"id": f"d{i}", "text": f"línea {i} " * (i % 7 + 1), "meta": {"n": i, "src": "x" if i % 2 else "y"}}
        for i in range(60)]


def test_uniform_file_streamed_same_table_as_builder(tmp_path, stream_small):
    path = _write(tmp_path / "d.jsonl", ROWS)
    ds = _load(path, tmp_path / "c")
    assert _streamed_files(tmp_path / "c") == ["data.arrow"]
    ref = _builder(path, tmp_path / "c")
    assert ds.data.table.equals(ref.data.table)
    assert ds.features == ref.features
    assert ds[59] == {"id": "d59", "text": "línea 59 " * 4, "meta": {"n": 59, "src": "x"}}
    assert len(ds.data.table.to_batches()) > 5  # it did go block by block


def test_rerun_reuses_file_and_changed_input_makes_new_one(tmp_path, stream_small):
    path = _write(tmp_path / "d.jsonl", ROWS)
    cache = tmp_path / "c"
    first = _load(path, cache)
    second = _load(path, cache)
    assert first.cache_files == second.cache_files and first._fingerprint == second._fingerprint
    _write(path, ROWS[:10])
    third = _load(path, cache)
    assert third.num_rows == 10 and third.cache_files != first.cache_files
    assert len(list((cache / "dj_jsonl").iterdir())) == 2


def test_field_first_seen_late_goes_to_builder(tmp_path, stream_small):
    rows = [dict(r) for r in ROWS]
    rows[50]["extra"] = "late"  # not in the first block's schema
    path = _write(tmp_path / "d.jsonl", rows)
    ds = _load(path, tmp_path / "c")
    assert _streamed_files(tmp_path / "c") == []  # no half file left behind either
    assert ds.data.table.equals(_builder(path, tmp_path / "c").data.table)
    assert ds[50]["extra"] == "late" and ds[49]["extra"] is None


def test_kind_change_goes_to_builder(tmp_path, stream_small, monkeypatch):
    rows = [dict(r) for r in ROWS]
    rows[40]["meta"] = {"n": "forty", "src": "x"}  # int before, string here
    path = _write(tmp_path / "d.jsonl", rows)
    ds = _load(path, tmp_path / "c")
    assert _streamed_files(tmp_path / "c") == []
    monkeypatch.setattr(Loader, "_stream_large_jsonl", lambda self, files: None)  # the loader as before
    before = _load(path, tmp_path / "c0")
    assert ds.features == before.features and ds.to_list() == before.to_list()
    assert ds[40]["meta"] == {"n": "forty", "src": "x"} and ds[39]["meta"] == {"n": 39, "src": "x"}


def test_bad_line_still_names_its_line(tmp_path, stream_small):
    path = _write(tmp_path / "d.jsonl", ROWS)
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"id": "bad", "text": \n')
    with pytest.raises(DataLoadError, match=r"line 61"):
        _load(path, tmp_path / "c")
    assert not any(n.endswith(".arrow") or ".tmp-" in n for n in os.listdir(tmp_path))


def test_field_null_through_a_block_keeps_the_sampled_type(tmp_path, stream_small, monkeypatch):
    # "note" is a string in the first lines (the schema sample), then null for many blocks: every block
    # gets the sampled schema, so the file streams (no builder) and equals the builder's table
    monkeypatch.setattr(loader_mod, "SCHEMA_SAMPLE_BYTES", 4096)
    rows = [{"id": f"d{i}", "text": f"text number {i} " * 3, "note": "first" if i < 3 else None} for i in range(80)]
    path = _write(tmp_path / "a.jsonl", rows)
    got = _load(path, tmp_path / "c")
    want = _builder(path, tmp_path)
    assert got.data.table.equals(want.data.table)
    assert got["note"][:4] == ["first", "first", "first", None] and got.num_rows == 80
    assert [p.name for p in (tmp_path / "c" / "dj_jsonl").rglob("*") if p.is_file()] == ["data.arrow"]


def test_head_lines_keeps_whole_lines(tmp_path):
    p = tmp_path / "h.jsonl"
    p.write_bytes(b'{"a": 1}\n{"a": 22}\n{"a": 333}\n')
    assert loader_mod._head_lines(str(p), 12) == b'{"a": 1}\n'
    assert loader_mod._head_lines(str(p), 1000) == b'{"a": 1}\n{"a": 22}\n{"a": 333}\n'
    assert loader_mod._head_lines(str(p), 5) == b""  # the first line is longer: no sample


def test_each_block_is_one_record_batch(tmp_path, stream_small):
    # 60 lines of 64-127 bytes (the texts repeat 1-7 times), 5,706 bytes in all, in blocks of whole lines of
    # at most 256 bytes: 26 blocks of 3, 2, 2, 3, ... lines, the last the 60th line alone; each parsed
    # alone and written as one record batch (no copy into larger batches)
    path = _write(tmp_path / "d.jsonl", ROWS)
    assert path.stat().st_size == 5706
    ds = _load(path, tmp_path / "c")
    batches = ds.data.table.to_batches()
    assert [b.num_rows for b in batches] == [3, 2, 2] * 8 + [3, 1]
    assert ds.data.table.column("text").num_chunks == 26
    assert ds.data.table.equals(_builder(path, tmp_path / "c").data.table)


def _blocks(data: bytes, size: int, tmp_path) -> list[bytes]:
    p = tmp_path / "b.jsonl"
    p.write_bytes(data)
    return [b.to_pybytes() for b in loader_mod._line_blocks(str(p), size)]


def test_line_blocks_whole_lines(tmp_path):
    data = b'{"a": 1}\n{"a": 22}\n{"a": 333}\n'  # lines of 9, 10 and 11 bytes
    assert _blocks(data, 12, tmp_path) == [b'{"a": 1}\n', b'{"a": 22}\n', b'{"a": 333}\n']
    assert _blocks(data, 20, tmp_path) == [b'{"a": 1}\n{"a": 22}\n', b'{"a": 333}\n']
    assert _blocks(data, 1000, tmp_path) == [data]
    assert _blocks(data, 30, tmp_path) == [data]  # exactly the file: one block
    # a line longer than the block size is read again, whole
    long = b'{"a": "' + b"x" * 50 + b'"}\n'
    assert _blocks(b'{"a": 1}\n' + long + b'{"a": 2}\n', 16, tmp_path) == [b'{"a": 1}\n', long, b'{"a": 2}\n']
    # the last line without its newline, CRLF line ends, an empty file
    assert _blocks(b'{"a": 1}\n{"a": 2}', 12, tmp_path) == [b'{"a": 1}\n', b'{"a": 2}']
    assert _blocks(b'{"a": 1}\r\n{"a": 2}\r\n', 12, tmp_path) == [b'{"a": 1}\r\n', b'{"a": 2}\r\n']
    assert _blocks(b"", 12, tmp_path) == []


def test_long_lines_blank_lines_and_no_final_newline_stream(tmp_path, stream_small):
    rows = [dict(r) for r in ROWS]
    rows[30]["text"] = "una línea larga " * 100  # 1,700 bytes: longer than a block
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path = tmp_path / "d.jsonl"
    path.write_text(body.replace("\n", "\n\n", 5).rstrip("\n") + "\n\n  \n", encoding="utf-8")
    ds = _load(path, tmp_path / "c")
    assert _streamed_files(tmp_path / "c") == ["data.arrow"]
    assert ds.num_rows == 60 and ds[30]["text"] == "una línea larga " * 100
    assert ds.data.table.equals(_builder(path, tmp_path / "c").data.table)
    path2 = tmp_path / "e.jsonl"
    path2.write_text(body.rstrip("\n"), encoding="utf-8")  # no newline after the last line
    ds2 = _load(path2, tmp_path / "c2")
    assert _streamed_files(tmp_path / "c2") == ["data.arrow"]
    assert ds2.num_rows == 60 and ds2[59]["id"] == "d59"
    assert ds2.data.table.equals(ds.data.table)
