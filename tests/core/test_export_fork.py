"""The JSONL export written by several forked processes (exporter.jsonl_tmps): same bytes as one."""
import os

import numpy as np
import pyarrow as pa
import pytest

from data_juicer.core import exporter as ex
from data_juicer.core.exporter import Exporter


def _table(n=23):
    return pa.table({"text": [f"doc é {i}\n\"q\"" for i in range(n)], "id": list(range(n)),
                     "__dj__stats__": [{"len": float(i) / 3} for i in range(n)]})


def _export(tmp_path, name, procs, indices=None, table=None):
    folder = tmp_path / name
    folder.mkdir()
    rep = Exporter(str(folder / "out.jsonl"), write_procs=procs).export(table or _table(), indices)
    return rep, (folder / "out.jsonl").read_bytes(), (folder / "out_stats.jsonl").read_bytes(), folder


@pytest.mark.parametrize("procs", [2, 3])
@pytest.mark.parametrize("with_indices", [False, True])
def test_same_bytes_as_one_process(tmp_path, monkeypatch, procs, with_indices):
    monkeypatch.setattr(ex, "FORK_MIN_ROWS", 2)
    idx = np.array([0, 2, 3, 7, 8, 9, 15, 21, 22]) if with_indices else None
    rep1, res1, st1, _ = _export(tmp_path, "one", 1, idx)
    repn, resn, stn, folder = _export(tmp_path, "many", procs, idx)
    assert (resn, stn) == (res1, st1)
    assert repn.rows == rep1.rows == (9 if with_indices else 23)
    lines = resn.decode().splitlines()
    assert lines[1] == ('{"text": "doc é 2\\n\\"q\\"", "id": 2}' if with_indices else
                        '{"text": "doc é 1\\n\\"q\\"", "id": 1}')
    assert stn.decode().splitlines()[-1] == '{"__dj__stats__": {"len": 7.333333333333333}}'
    assert sorted(os.listdir(folder)) == ["out.jsonl", "out_stats.jsonl"]  # no part file left


def test_failed_child_part_is_rewritten(tmp_path, monkeypatch):
    monkeypatch.setattr(ex, "FORK_MIN_ROWS", 2)
    parent = os.getpid()
    real = ex._write_range

    def failing_in_child(*a, **k):
        if os.getpid() != parent:
            raise RuntimeError("child fails")
        return real(*a, **k)

    _, res1, st1, _ = _export(tmp_path, "one", 1)
    monkeypatch.setattr(ex, "_write_range", failing_in_child)
    _, res2, st2, folder = _export(tmp_path, "two", 2)
    assert (res2, st2) == (res1, st1)
    assert sorted(os.listdir(folder)) == ["out.jsonl", "out_stats.jsonl"]


def test_data_error_raised_and_no_file_left(tmp_path, monkeypatch):
    monkeypatch.setattr(ex, "FORK_MIN_ROWS", 2)
    table = pa.table({"text": ["a", "b", "c", "d"], "v": [b"\x00", b"ok", b"x", b"y"]})

    def boom(obj):
        raise TypeError(f"cannot write a {type(obj).__name__} value as JSON")

    monkeypatch.setattr(ex, "_json_default", boom)
    folder = tmp_path / "bad"
    folder.mkdir()
    with pytest.raises(TypeError, match="cannot write a bytes value"):
        Exporter(str(folder / "out.jsonl"), write_procs=2, export_stats=False).export(table)
    assert os.listdir(folder) == []


def test_small_exports_and_switch_stay_in_process(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(ex.os, "fork", lambda: calls.append(1) or (_ for _ in ()).throw(AssertionError))
    _export(tmp_path, "small", 2)  # 23 rows < FORK_MIN_ROWS
    monkeypatch.setattr(ex, "FORK_MIN_ROWS", 2)
    monkeypatch.setenv("DJ_EXPORT_FORK", "0")
    _export(tmp_path, "off", 2)
    assert calls == []


def test_mapped_text_pages_handed_back_same_bytes(tmp_path, monkeypatch):
    import datasets

    from data_juicer.core.backends.hf import _drop_mapped_text

    monkeypatch.setattr(ex, "FORK_MIN_ROWS", 2)
    n = 3000
    mem = pa.table({"text": [f"line {i} " * (i % 50 + 1) for i in range(n)], "id": list(range(n))})
    path = str(tmp_path / "t.arrow")
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, mem.schema) as w:
        w.write_table(mem, max_chunksize=700)
    mapped = datasets.Dataset.from_file(path)
    assert [c.type for c, _ in ex._mapped_text(mapped.data.table)] == [pa.string()]  # the text, not the ids
    assert ex._mapped_text(mem) == []  # in memory: never touched
    _drop_mapped_text(mapped)  # what the load does: nothing changes but the resident set
    idx = np.arange(0, n, 3)
    outs = []
    for name, table, procs in (("mem", mem, 1), ("map1", mapped.data.table, 1), ("map2", mapped.data.table, 2)):
        folder = tmp_path / name
        folder.mkdir()
        Exporter(str(folder / "o.jsonl"), write_procs=procs, export_stats=False).export(table, idx)
        outs.append((folder / "o.jsonl").read_bytes())
    assert outs[0] == outs[1] == outs[2]
    assert outs[0].decode().splitlines()[1] == '{"text": "' + "line 3 " * 4 + '", "id": 3}'
