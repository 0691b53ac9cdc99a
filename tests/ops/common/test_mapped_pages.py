"""MappedPages on a column of many chunks (a 2M-row export has thousands): each drop finds its chunk by
bisection, drop_all releases every chunk, and an exported file's bytes do not change."""
import json

import numpy as np
import pyarrow as pa

from data_juicer.ops.common.mapped_pages import MappedPages


def _rss_kb(lo: int, hi: int) -> int:
    """Resident KB of the mappings of this process that overlap [lo, hi)."""
    total, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                a, b = (int(x, 16) for x in head[0].split("-"))
                inside = a < hi and lo < b
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


def _mapped(tmp_path, n_chunks: int, rows: int):
    path = str(tmp_path / "t.arrow")
    schema = pa.schema([("text", pa.string())])
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, schema) as w:
        for c in range(n_chunks):
            w.write_table(pa.table({"text": [f"chunk {c} row {r} " + "x" * 200 for r in range(rows)]}))
    return pa.ipc.open_file(pa.memory_map(path, "r")).read_all()


def test_many_chunks_each_drop_finds_its_own_chunk(tmp_path):
    table = _mapped(tmp_path, n_chunks=3000, rows=40)  # ~8.6 KB of text a chunk
    col = table.column("text")
    m = MappedPages(col)
    assert len(m.ranges) == 3000
    assert m._starts == sorted(m._starts)
    calls = []
    m.madvise = lambda lo, size, advice: calls.append((lo, size, advice))
    m.drop(col.slice(40 * 1234, 40))  # exactly chunk 1234
    text = col.chunks[1234].buffers()[2]
    page = m.page
    lo = -(-text.address // page) * page
    hi = (text.address + text.size) // page * page
    assert calls == [(lo, hi - lo, 4)]
    calls.clear()
    for k in range(0, len(col), 256):  # a batch at a time, as the exporter and hash_table read
        m.drop(col.slice(k, 256))
    assert len(calls) > 2500 and all(a == 4 and sz > 0 for _, sz, a in calls)  # (slices cut chunks: some parts hold no whole page)
    calls.clear()
    m.drop_all()
    assert len(calls) == 3000  # one call a chunk


def test_drop_all_hands_back_the_pages(tmp_path):
    table = _mapped(tmp_path, n_chunks=200, rows=200)  # ~43 KB of text a chunk
    col = table.column("text")
    m = MappedPages(col)
    lo, hi = m.ranges[0][0], m.ranges[-1][1]
    for c in col.chunks:  # touch every page of the text
        np.frombuffer(c.buffers()[2], dtype=np.uint8).sum()
    before = _rss_kb(lo, hi)
    m.drop_all()
    after = _rss_kb(lo, hi)
    assert before > 7_000 and after < before // 4  # ~8.6 MB of text, handed back
    assert col[39_999].as_py() == "chunk 199 row 199 " + "x" * 200  # read again from the file


def test_drop_of_text_outside_the_mapping_is_ignored(tmp_path):
    table = _mapped(tmp_path, n_chunks=2, rows=5)
    m = MappedPages(table.column("text"))
    m.drop(pa.chunked_array([pa.array(["in memory"])]))  # heap text: not in a range, nothing released
    assert MappedPages(pa.chunked_array([pa.array(["in memory"])])).ranges == []


def test_export_of_many_chunks_same_bytes(tmp_path):
    from data_juicer.core import exporter as ex

    table = _mapped(tmp_path, n_chunks=400, rows=10)
    out = tmp_path / "o.jsonl"
    with open(out, "w", encoding="utf-8") as f:
        ex._write_range(f, table, None, 0, len(table), 7)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4000
    assert json.loads(lines[0]) == {"text": "chunk 0 row 0 " + "x" * 200}
    assert json.loads(lines[3999]) == {"text": "chunk 399 row 9 " + "x" * 200}
    picked = np.array([3999, 0, 17], dtype=np.int64)
    out2 = tmp_path / "p.jsonl"
    with open(out2, "w", encoding="utf-8") as f:
        ex._write_range(f, table, picked, 0, 3, 2)
    assert [json.loads(x)["text"][:18] for x in out2.read_text(encoding="utf-8").splitlines()] == [
        "chunk 399 row 9 xx", "chunk 0 row 0 xxxx", "chunk 1 row 7 xxxx"]
