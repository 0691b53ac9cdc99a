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
