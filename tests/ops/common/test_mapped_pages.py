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


def test_drop_rows_hands_back_only_those_rows(tmp_path):
    table = _mapped(tmp_path, n_chunks=10, rows=1000)  # 10 chunks of ~217 KB of text
    col = table.column("text")
    m = MappedPages(col)
    lo, hi = m.ranges[0][0], m.ranges[-1][1]
    for c in col.chunks:
        np.frombuffer(c.buffers()[2], dtype=np.uint8).sum()
    full = _rss_kb(lo, hi)
    assert full > 2_000
    m.drop_rows(2500, 4500)  # the second half of chunk 2, all of chunk 3, the first half of chunk 4
    dropped = full - _rss_kb(lo, hi)
    assert 380 <= dropped <= 440  # 2,000 rows of 217 bytes: ~424 KB, less a page at each cut
    m.drop_rows(4500, 4500)  # no rows: nothing
    assert full - _rss_kb(lo, hi) == dropped
    assert col[2500].as_py() == "chunk 2 row 500 " + "x" * 200  # read again from the file


def test_drop_rows_one_call_per_chunk_touched(tmp_path):
    table = _mapped(tmp_path, n_chunks=3000, rows=40)
    m = MappedPages(table.column("text"))
    calls = []
    m.madvise = lambda lo, size, advice: calls.append((lo, size))
    m.drop_rows(40 * 1234, 40 * 1234 + 40)  # exactly chunk 1234
    text = table.column("text").chunks[1234].buffers()[2]
    first = -(-text.address // m.page) * m.page
    assert calls == [(first, (text.address + text.size) // m.page * m.page - first)]
    calls.clear()
    m.drop_rows(40 * 100 + 20, 40 * 103 + 20)  # half of 100, 101, 102, half of 103: four chunks
    assert len(calls) <= 4 and len(calls) >= 2  # (a half chunk of ~4.3 KB may hold no whole page)


def _mapped_text_rss_during_export(tmp_path, indices):
    """The most KB of the text mapping resident while _write_range writes (sampled at each write)."""
    from data_juicer.core import exporter as ex

    table = _mapped(tmp_path, n_chunks=20, rows=500)  # ~2.2 MB of text
    m = MappedPages(table.column("text"))
    lo, hi = m.ranges[0][0], m.ranges[-1][1]
    m.drop_all()  # what the load leaves resident: nothing of the text
    seen = []

    class Sampled:
        def __init__(self, f):
            self.f = f

        def write(self, s):
            seen.append(_rss_kb(lo, hi))
            return self.f.write(s)

    out = tmp_path / "o.jsonl"
    with open(out, "w", encoding="utf-8") as f:
        ex._write_range(Sampled(f), table, indices, 0, len(table) if indices is None else len(indices), 256)
    return max(seen), _rss_kb(lo, hi), out.read_text(encoding="utf-8").splitlines()


def test_export_in_table_order_hands_back_each_batch(tmp_path):
    peak, end, lines = _mapped_text_rss_during_export(tmp_path, None)
    assert len(lines) == 10_000 and json.loads(lines[9_999])["text"].startswith("chunk 19 row 499 ")
    assert peak < 600 and end < 300  # of ~2,200 KB: a batch (256 rows, ~56 KB; the kernel maps 64 KB around a fault)
    kept = np.arange(0, 10_000, 3)  # a dedup's kept rows: ascending
    peak, _, lines = _mapped_text_rss_during_export(tmp_path, kept)
    assert len(lines) == 3334 and json.loads(lines[1])["text"].startswith("chunk 0 row 3 ")
    assert peak < 600


def test_export_out_of_order_still_same_rows(tmp_path):
    order = np.arange(10_000)[::-1].copy()  # descending: pages are handed back only every _DROP_EVERY batches
    peak, end, lines = _mapped_text_rss_during_export(tmp_path, order)
    assert json.loads(lines[0])["text"].startswith("chunk 19 row 499 ") and len(lines) == 10_000
    assert peak > 1_000 and end < 300  # the whole text was resident at some point, then handed back
