"""Export of selected rows (``indices``) from a many-chunk table: each batch is taken from the slice
its rows lie in; same lines as taking from the whole table, in the order given."""
import json

import numpy as np
import pyarrow as pa

from data_juicer.core.exporter import _row_batches, write_jsonl


def _table():
    chunks = [pa.table({"id": [f"r{c}-{i}" for i in range(7)], "n": list(range(c * 7, c * 7 + 7))})
              for c in range(9)]
    return pa.concat_tables(chunks)  # 9 chunks of 7 rows


def test_batches_from_slices_keep_given_order(tmp_path):
    table = _table()
    assert table.column("id").num_chunks == 9
    idx = np.array([62, 0, 5, 30, 29, 61, 7, 8, 44, 3, 3])  # unsorted, repeated, across chunks
    got = [r for b in _row_batches(table, idx, 4) for r in b.to_pylist()]
    assert [r["n"] for r in got] == [62, 0, 5, 30, 29, 61, 7, 8, 44, 3, 3]
    assert got[0] == {"id": "r8-6", "n": 62}
    path = tmp_path / "out.jsonl"
    write_jsonl(table, str(path), batch_rows=3, indices=idx)
    lines = path.read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines[:3]] == ["r8-6", "r0-0", "r0-5"]
    assert lines == [json.dumps(r, ensure_ascii=False) for r in table.take(idx).to_pylist()]


def test_empty_indices_write_nothing(tmp_path):
    path = tmp_path / "out.jsonl"
    write_jsonl(_table(), str(path), indices=np.array([], dtype=np.int64))
    assert path.read_text() == ""
