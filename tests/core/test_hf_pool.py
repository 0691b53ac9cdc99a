"""Our forked worker pool for HF passes (core/backends/hf_pool.py): the same dataset as
``datasets.Dataset.map``, rows in order, chunks handed out as workers become free, a worker's
exception raised in the driver, the pass cache, and ledger entries from the workers end to end."""
import json
import os
import textwrap
import time

import datasets
import pytest

from data_juicer.cli.process import main
from data_juicer.core.backends import hf_pool
from tests.conftest import read_jsonl


def _ds(n=100):
    return datasets.Dataset.from_dict({"id": list(range(n)), "text": [f"row {i}" for i in range(n)],
                                       "meta": [{"k": i % 3} for i in range(n)]})


def _drop_odd_add_len(batch):
    keep = [i for i, x in enumerate(batch["id"]) if x % 2 == 0]
    out = {k: [batch[k][i] for i in keep] for k in batch}
    out["n"] = [len(batch["text"][i]) * 1.5 for i in keep]
    return out


def test_same_dataset_as_map_rows_in_order():
    ds = _ds(100)
    want = ds.map(_drop_odd_add_len, batched=True, batch_size=3)
    got = hf_pool.pool_map(ds, _drop_odd_add_len, batch_size=3, num_proc=2, chunk_rows=7)
    assert got.features == want.features
    assert got.column_names == ["id", "text", "meta", "n"]
    assert got.to_dict() == want.to_dict()
    assert got["id"][:5] == [0, 2, 4, 6, 8] and got.num_rows == 50
    assert got["n"][1] == 7.5  # len("row 2") * 1.5


def test_indices_and_remove_columns():
    ds = _ds(60).select(range(59, -1, -2))  # an index mapping: ids 59, 57, ..., 1
    got = hf_pool.pool_map(ds, lambda b: {"twice": [x * 2 for x in b["id"]]}, batch_size=4, num_proc=2,
                           chunk_rows=5, remove_columns=["text", "meta"])
    assert got.column_names == ["id", "twice"]
    assert got["twice"][:3] == [118, 114, 110] and got.num_rows == 30


def test_uneven_chunks_balance():
    """The worker stuck on the slow first chunk takes fewer chunks; the output keeps the row order."""

    def slow_first(batch):
        if batch["id"][0] < 4:
            time.sleep(0.6)
        return {"pid": [os.getpid()] * len(batch["id"])}

    got = hf_pool.pool_map(_ds(40), slow_first, batch_size=4, num_proc=2, chunk_rows=4)
    assert got["id"] == list(range(40))
    pids = got["pid"]
    slow = pids[0]
    chunks_of = {p: len({i // 4 for i, q in enumerate(pids) if q == p}) for p in set(pids)}
    assert len(chunks_of) == 2 and os.getpid() not in chunks_of
    assert chunks_of[slow] < chunks_of[next(p for p in chunks_of if p != slow)]


def test_recycled_workers_same_dataset(monkeypatch):
    """A worker past its row budget is replaced by a freshly forked one: same rows, same order, more pids."""
    ds = _ds(100)
    want = ds.map(_drop_odd_add_len, batched=True, batch_size=3)

    def with_pid(batch):
        out = _drop_odd_add_len(batch)
        out["pid"] = [os.getpid()] * len(out["id"])
        return out

    monkeypatch.setenv(hf_pool.ENV_WORKER_ROWS, "14")  # two chunks of 7 rows a worker
    got = hf_pool.pool_map(ds, with_pid, batch_size=3, num_proc=2, chunk_rows=7)
    assert got.remove_columns("pid").to_dict() == want.to_dict()
    pids = got["pid"]
    assert len(set(pids)) >= 7  # 15 chunks, at most 2 a worker
    assert all(len({i // 7 for i, q in enumerate(pids) if q == p}) <= 2 for p in set(pids))
    monkeypatch.setenv(hf_pool.ENV_WORKER_ROWS, "0")  # never replaced: the two first workers do it all
    assert len(set(hf_pool.pool_map(ds, with_pid, batch_size=3, num_proc=2, chunk_rows=7)["pid"])) <= 2


def test_worker_rows_setting(monkeypatch):
    monkeypatch.delenv(hf_pool.ENV_WORKER_ROWS, raising=False)
    assert hf_pool.worker_rows() == 25_000
    monkeypatch.setenv(hf_pool.ENV_WORKER_ROWS, "0")
    assert hf_pool.worker_rows() == 0
    for bad in ("-1", "many"):
        monkeypatch.setenv(hf_pool.ENV_WORKER_ROWS, bad)
        with pytest.raises(ValueError, match="DJ_HF_POOL_WORKER_ROWS"):
            hf_pool.worker_rows()


def _huge_page_regions() -> int:
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as f:
        return sum(1 for line in f if line.startswith("VmFlags:") and " hg" in line)


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="needs Linux's /proc/self/smaps")
def test_no_huge_pages_clears_the_advice():
    """A region that asked for transparent huge pages (numpy does for large arrays where THP is in madvise
    mode) is told not to, so khugepaged does not fill it in during a pass."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6")
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    size = 8 << 20
    addr = libc.mmap(None, size, 3, 0x22, -1, 0)  # PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS
    try:
        if libc.madvise(addr, size, 14) != 0:  # MADV_HUGEPAGE: fails where the kernel has no THP
            pytest.skip("no transparent huge pages here")
        assert _huge_page_regions() >= 1
        assert hf_pool._no_huge_pages() >= size
        assert _huge_page_regions() == 0
        hf_pool._shed_memory()  # and it is part of what the driver does before a fork
    finally:
        libc.munmap(addr, size)


def test_shed_only_when_there_is_something_to_shed(monkeypatch):
    """The pre-fork shed runs for a large input or a large driver, and is skipped (0.08-0.09 s of serial
    time that freed nothing: the 300-image recipe) when both are small."""
    mb = 1 << 20
    monkeypatch.setattr(hf_pool, "_anon_rss", lambda: 100 * mb)
    assert not hf_pool._needs_shed(7 * mb)
    assert hf_pool._needs_shed(8 * mb)  # SHED_MIN_DATA_BYTES
    monkeypatch.setattr(hf_pool, "_anon_rss", lambda: 160 * mb)  # SHED_MIN_ANON_BYTES
    assert hf_pool._needs_shed(1)
    monkeypatch.setattr(hf_pool, "_anon_rss", lambda: None)  # unknown: shed as before
    assert hf_pool._needs_shed(1)
    monkeypatch.undo()
    assert 10 * mb < hf_pool._anon_rss() < 10_000 * mb
    small = _ds(100)
    assert 0 < hf_pool._data_bytes(small) < 8 * mb
    assert hf_pool._data_bytes(object()) == hf_pool.SHED_MIN_DATA_BYTES  # a table that cannot say: shed
    calls = []
    monkeypatch.setattr(hf_pool, "_anon_rss", lambda: 100 * mb)
    monkeypatch.setattr(hf_pool, "_shed_memory", lambda: calls.append(1))
    hf_pool.pool_map(small, _drop_odd_add_len, batch_size=10, num_proc=2, chunk_rows=20)
    assert calls == []
    monkeypatch.setattr(hf_pool, "_anon_rss", lambda: 200 * mb)
    got = hf_pool.pool_map(small, _drop_odd_add_len, batch_size=10, num_proc=2, chunk_rows=20)
    assert calls == [1] and got["id"][:3] == [0, 2, 4]


def test_worker_exception_raised_in_driver(tmp_path):
    def boom(batch):
        if 37 in batch["id"]:
            raise KeyError("row 37 is bad")
        return batch

    ds = _ds(60)
    with pytest.raises(KeyError, match="row 37 is bad"):
        hf_pool.pool_map(ds, boom, batch_size=5, num_proc=2, chunk_rows=5, fingerprint="f00d",
                         cache_dir=str(tmp_path))
    assert os.listdir(tmp_path) == []  # no chunk file, no marker left behind


def test_unpicklable_exception_becomes_worker_error():
    class Local(Exception):
        def __reduce__(self):
            raise TypeError("not picklable")

    def boom(batch):
        raise Local("x")

    with pytest.raises(hf_pool.WorkerError, match="Local"):
        hf_pool.pool_map(_ds(20), boom, batch_size=5, num_proc=2, chunk_rows=5)


def test_cache_reused_by_fingerprint(tmp_path):
    calls = tmp_path / "calls"
    calls.mkdir()

    def counted(batch):
        (calls / f"{os.getpid()}-{batch['id'][0]}").touch()
        return {"y": [i + 1 for i in batch["id"]]}

    cache = tmp_path / "cache"
    a = hf_pool.pool_map(_ds(30), counted, batch_size=5, num_proc=2, chunk_rows=10, fingerprint="abc",
                         cache_dir=str(cache))
    assert len(os.listdir(calls)) == 6 and a._fingerprint == "abc"
    marker = json.loads((cache / "cache-abc_pool.json").read_text())
    assert marker["rows"] == 30 and len(marker["files"]) == 3
    b = hf_pool.pool_map(_ds(30), counted, batch_size=5, num_proc=2, chunk_rows=10, fingerprint="abc",
                         cache_dir=str(cache))
    assert len(os.listdir(calls)) == 6  # not run again
    assert b["y"] == list(range(1, 31))


def test_all_rows_dropped_keeps_input_columns():
    got = hf_pool.pool_map(_ds(20), lambda b: {k: [] for k in b}, batch_size=5, num_proc=2, chunk_rows=5)
    assert got.num_rows == 0 and got.column_names == ["id", "text", "meta"]


CUSTOM_OP = textwrap.dedent('''
    from data_juicer.ops.base import Mapper
    from data_juicer.ops.registry import OPERATORS


    @OPERATORS.register_module("pool_boom_mapper")
    class PoolBoomMapper(Mapper):
        """Upper-cases the text; raises on texts containing 'BOOM'."""

        def process_batched(self, samples):
            out = []
            for t in samples[self.text_key]:
                if "BOOM" in t:
                    raise ValueError(f"cannot handle {t!r}")
                out.append(t.upper())
            samples[self.text_key] = out
            return samples
''')


def _rows(n=40):
    return [{"id": f"s{i}", "text": ("BOOM " if i % 7 == 3 else "") + f"text number {i}"} for i in range(n)]


def _run(tmp_path, make_recipe, monkeypatch, pool: str, **kw):
    monkeypatch.setattr(hf_pool, "enabled", lambda: pool == "1")
    out_dir = tmp_path / f"out_{pool}"
    op_file = tmp_path / "pool_ops.py"
    op_file.write_text(CUSTOM_OP)
    recipe = make_recipe(_rows(), [{"pool_boom_mapper": {"batch_size": 4}},
                                   {"text_length_filter": {"min_len": 14, "batch_size": 4}}],
                         custom_operator_paths=[str(op_file)], np=2, export_path=str(out_dir / "result.jsonl"), **kw)
    assert main(["--config", recipe]) == 0
    job = out_dir / [d for d in os.listdir(out_dir) if (out_dir / d).is_dir()][0]
    return ((out_dir / "result.jsonl").read_bytes(), read_jsonl(job / "errors.jsonl"))


@pytest.mark.parametrize("use_cache", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_end_to_end_ledger_from_workers_same_output_as_map(tmp_path, make_recipe, monkeypatch, use_cache):
    pooled, ledger = _run(tmp_path, make_recipe, monkeypatch, "1", use_cache=use_cache)
    rows = [json.loads(x) for x in pooled.splitlines()]
    # s3, s10, s17, ... failed; s0..s9 have texts under 14 characters ("TEXT NUMBER 9")
    assert [r["id"] for r in rows][:4] == ["s11", "s12", "s13", "s14"] and len(rows) == 25
    assert sorted(e["id"]["id"] for e in ledger) == ["s10", "s17", "s24", "s3", "s31", "s38"]
    assert {e["op"] for e in ledger} == {"pool_boom_mapper"}
    mapped, ledger_map = _run(tmp_path, make_recipe, monkeypatch, "0", use_cache=use_cache)
    assert pooled == mapped
    assert sorted(e["id"]["id"] for e in ledger_map) == sorted(e["id"]["id"] for e in ledger)


def test_end_to_end_recycled_workers_same_output_and_ledger(tmp_path, make_recipe, monkeypatch):
    """Workers replaced after every 4-row chunk: the export and the error ledger are those of two workers."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    pooled, ledger = _run(tmp_path / "a", make_recipe, monkeypatch, "1", use_cache=False)
    monkeypatch.setenv(hf_pool.ENV_WORKER_ROWS, "4")
    recycled, ledger_r = _run(tmp_path / "b", make_recipe, monkeypatch, "1", use_cache=False)
    assert recycled == pooled and len(recycled.splitlines()) == 25
    assert sorted(e["id"]["id"] for e in ledger_r) == sorted(e["id"]["id"] for e in ledger) == [
        "s10", "s17", "s24", "s3", "s31", "s38"]


_STOPPED_BEFORE_TARGET = r"""
import os, signal, sys, time
import datasets
from data_juicer.core.backends import hf_pool

parent = os.getpid()
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))  # what ray.init installs
real_fork, forks = os.fork, [0]


def slow_fork():  # the second worker is stopped in the child before multiprocessing's try/os._exit
    forks[0] += 1
    pid = real_fork()
    if pid == 0 and forks[0] == 2:
        end = time.monotonic() + 3
        while time.monotonic() < end:
            pass
    return pid


os.fork = slow_fork


def boom(batch):
    raise ValueError("the first chunk fails")


try:
    hf_pool.pool_map(datasets.Dataset.from_dict({"id": list(range(20))}), boom, batch_size=5, num_proc=2,
                     chunk_rows=5)
except ValueError as e:
    print("raised:", e, flush=True)
finally:
    if os.getpid() != parent:
        print("a stopped worker ran the driver's code", flush=True)
        os._exit(3)
"""


def test_worker_stopped_before_its_target_dies_under_a_sigterm_handler(tmp_path):
    # a worker forked while a Python SIGTERM handler is installed (Ray's) and terminated before it reaches
    # ``_worker`` used to raise SystemExit on the driver's copied stack and run the driver's code
    import subprocess
    import sys

    script = tmp_path / "stopped.py"
    script.write_text(_STOPPED_BEFORE_TARGET)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache")})
    assert out.stdout.splitlines() == ["raised: the first chunk fails"], out.stdout + out.stderr
    assert out.returncode == 0, out.stderr
