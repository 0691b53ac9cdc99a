"""The lean load's validation (``loader._validate_handing_back``) checks the memory-mapped Arrow file a
column chunk at a time and hands each chunk's text pages back: the resident set of the file mapping stays
small after the load (the whole-table check left all of it resident), and bad data is still refused."""
import json

import pyarrow as pa
import pytest

from data_juicer.core import loader as loader_mod
from data_juicer.core.loader import Loader, SourceSpec, _validate_handing_back


def _mapping_rss_kb(name: str) -> int:
    total, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):
                inside = len(head) >= 6 and head[5].endswith(name)
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


def _write(path, n=4000):
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": i, "text": f"doc {i} " + "word " * 200, "meta": {"src": f"s{i % 7}"}}) + "\n")


def test_lean_load_leaves_little_of_the_file_resident(tmp_path, monkeypatch):
    monkeypatch.setattr(loader_mod, "SMALL_BYTES", 0)  # the streamed path: a memory-mapped Arrow file
    monkeypatch.setattr(loader_mod, "STREAM_BLOCK_BYTES", 256 << 10)
    data = tmp_path / "in.jsonl"
    _write(data)  # ~4.1 MB of text
    rows = Loader(text_keys=["text"], cache_dir=str(tmp_path / "c")).load_lean([SourceSpec(str(data))]).dataset
    table = rows.data.table
    assert table.column("text").num_chunks > 10 and len(table) == 4000
    resident = _mapping_rss_kb("data.arrow")
    assert resident < 600  # of ~4,200 KB validated (table.validate(full=True) left ~4,200 resident)
    assert table.column("text")[3999].as_py().startswith("doc 3999 word")  # read again from the file
    table.validate(full=True)
    assert _mapping_rss_kb("data.arrow") > 3_000  # the same check on the whole table: all of it resident


def test_validation_still_refuses_bad_utf8_in_a_later_chunk():
    good = pa.array(["fine text"] * 10)
    bad = pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(bytes(8)[:4] + (2).to_bytes(4, "little")),
                                                 pa.py_buffer(b"\xff\xfe")])
    table = pa.table({"text": pa.chunked_array([good, good, bad])})
    with pytest.raises(pa.ArrowInvalid):
        _validate_handing_back(table)
    with pytest.raises(pa.ArrowInvalid):  # and in a struct field
        _validate_handing_back(pa.table({"m": pa.chunked_array([pa.StructArray.from_arrays([bad], ["s"])])}))
    _validate_handing_back(pa.table({"text": pa.chunked_array([good, good])}))  # valid: no error
