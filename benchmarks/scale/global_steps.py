#!/usr/bin/env python
"""Memory and time of the three deduplicators' global steps as the row count grows.

  python benchmarks/scale/global_steps.py                          # 28.8k, 288k, 1.15M rows
  python benchmarks/scale/global_steps.py --rows 28800 1150000

The whole-corpus runs (``run.py``) at 500k and 2M documents cost tens of CPU-minutes; this isolates the
part of them whose memory can grow with the corpus: each deduplicator's ``process`` (the global step
after the hashing pass), fed the hash columns it reads, at the row counts that reach it in the recipe
(~57.6 % of the input survives the mappers and filters: 28.8k rows at 50k documents, 288k at 500k, 1.15M
at 2M). The columns are synthetic but shaped like the real ones: ``__dj__hash`` 32-character MD5 hex with
5 % exact repeats, ``__dj__minhash`` the op's signature width of uint32 with 5 % near copies (a few
values changed), ``__dj__simhash`` uint64 as text with 5 % near copies (1-3 bits flipped). As in a run,
the table is an Arrow file on disk, memory-mapped by ``datasets.Dataset.from_file``.

The table is built by one subprocess and each op runs in a fresh one (so no memory freed by the\nbuild is reused); per op it reports wall and CPU seconds and the growth of the
process's anonymous memory (``RssAnon``, peak sampled every 3 ms by a thread) and of its resident memory (``VmHWM``, peak, reset before each
op through ``/proc/self/clear_refs``). File-backed pages of the memory-mapped table count in RSS/PSS but
are page cache, not allocations; the anonymous growth is what scales a run's footprint.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_ROWS = [28800, 288000, 1150000]
RECIPE_PARAMS = {  # benchmarks/text_pipeline/recipe.yaml
    "document_deduplicator": {"lowercase": False, "ignore_non_character": False},
    "document_minhash_deduplicator": {"tokenization": "space", "window_size": 5, "lowercase": True,
                                      "num_permutations": 256, "jaccard_threshold": 0.7},
    "document_simhash_deduplicator": {"tokenization": "space", "window_size": 6, "lowercase": True,
                                      "num_blocks": 6, "hamming_distance": 4},
}


def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


class _AnonPeak:
    """Samples ``RssAnon`` every few milliseconds in a thread (numpy and Arrow release the GIL in their
    long loops); ``peak`` is the largest value seen."""

    def __init__(self, interval: float = 0.003):
        import threading

        self.interval, self.peak, self._stop = interval, _status("RssAnon"), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, _status("RssAnon"))
            time.sleep(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _status("RssAnon"))


def build(n: int, path: str) -> dict:
    import numpy as np
    import pyarrow as pa

    from data_juicer.ops.registry import OPERATORS
    from data_juicer.utils.constant import HashKeys

    ops = {name: OPERATORS.get(name)(**p) for name, p in RECIPE_PARAMS.items()}
    width = ops["document_minhash_deduplicator"]._width
    schema = pa.schema([("id", pa.string()), (HashKeys.hash, pa.string()), (HashKeys.minhash, pa.binary()),
                        (HashKeys.simhash, pa.string())])
    block = 50000  # written block by block (duplicates point into their own block): little memory
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, schema) as w:
        for start in range(0, n, block):
            m = min(block, n - start)
            rng = np.random.default_rng([n, start])
            rows = np.flatnonzero(rng.random(m) < 0.05)
            src = (rng.random(len(rows)) * rows).astype(np.int64)  # an earlier row of the block
            base = rng.integers(0, 2**63, size=m, dtype=np.int64)  # exact hashes
            base[rows] = base[src]
            md5 = [f"{v:016x}{v * 7919 & 0xFFFFFFFFFFFFFFFF:016x}" for v in base.tolist()]
            sig = rng.integers(0, 2**32, size=(m, width), dtype=np.uint32)  # near copies: all but 3 values
            sig[rows] = sig[src]
            for _ in range(3):
                sig[rows, rng.integers(0, width, size=len(rows))] = rng.integers(0, 2**32, size=len(rows),
                                                                                 dtype=np.uint32)
            raw = sig.astype("<u4").tobytes()
            size = width * 4
            sh = rng.integers(0, 2**64, size=m, dtype=np.uint64)  # simhashes: 1 bit flipped
            sh[rows] = sh[src] ^ (np.uint64(1) << rng.integers(0, 64, size=len(rows)).astype(np.uint64))
            batch = pa.record_batch([pa.array([f"doc-{start + i:07d}" for i in range(m)]), pa.array(md5),
                                     pa.array([raw[i:i + size] for i in range(0, len(raw), size)], pa.binary()),
                                     pa.array([str(v) for v in sh.tolist()])], schema=schema)
            for j in range(0, m, 10000):
                w.write_batch(batch.slice(j, 10000))
            del sig, raw, batch
    return {"rows": n, "minhash_width": width, "file_mb": os.path.getsize(path) / 2**20}


def run_op(name: str, path: str) -> dict:
    """One op's global step on the table at ``path``, in a process that did nothing else before."""
    import datasets

    from data_juicer.core.dataset import DJDataset
    from data_juicer.ops.registry import OPERATORS

    op = OPERATORS.get(name)(**RECIPE_PARAMS[name])
    ds = DJDataset(datasets.Dataset.from_file(path))
    _reset_peak()
    anon0, rss0 = _status("RssAnon"), _status("VmRSS")
    t0, c0 = time.perf_counter(), time.process_time()
    with _AnonPeak() as peak:
        kept, _ = op.process(ds)
        n_kept = len(kept)
    return {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "kept": n_kept,
            "anon_base_mb": anon0 / 2**20, "anon_peak_growth_mb": (peak.peak - anon0) / 2**20,
            "anon_after_growth_mb": (_status("RssAnon") - anon0) / 2**20,
            "peak_rss_growth_mb": (_status("VmHWM") - rss0) / 2**20}


def run_chain(path: str) -> dict:
    """The three global steps one after the other in one process, each on the previous one's result, as
    the HF backend runs them (``run_global``: ``DJDataset(ds)`` -> ``process`` -> ``result.hf``): the
    later steps read their hash columns through the earlier ones' row selection (an indices mapping)."""
    import datasets

    from data_juicer.core.dataset import DJDataset
    from data_juicer.ops.registry import OPERATORS

    ds = datasets.Dataset.from_file(path)
    out = {}
    for name, params in RECIPE_PARAMS.items():
        op = OPERATORS.get(name)(**params)
        _reset_peak()
        anon0, rss0 = _status("RssAnon"), _status("VmRSS")
        t0, c0 = time.perf_counter(), time.process_time()
        with _AnonPeak() as peak:
            result, _ = op.process(DJDataset(ds))
            ds = result.hf
        out[name] = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "kept": len(ds),
                     "anon_base_mb": anon0 / 2**20, "anon_peak_growth_mb": (peak.peak - anon0) / 2**20,
                     "anon_after_growth_mb": (_status("RssAnon") - anon0) / 2**20,
                     "peak_rss_growth_mb": (_status("VmHWM") - rss0) / 2**20}
    return out


def _child(args: list[str]) -> dict:
    r = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False)
    if r.returncode:
        raise SystemExit(f"{' '.join(args)} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description="Memory/time of the dedup global steps vs row count.")
    ap.add_argument("--rows", type=int, nargs="+", default=DEFAULT_ROWS)
    ap.add_argument("--ops", nargs="+", default=list(RECIPE_PARAMS), choices=list(RECIPE_PARAMS),
                    help="the ops to run alone (default: all three)")
    ap.add_argument("--chain", action="store_true",
                    help="also run the three steps in sequence in one process, each on the previous one's "
                         "row selection, as a recipe run does (the later steps read through an indices mapping)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # build N PATH | op NAME PATH | chain - PATH
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "work" / "global_steps.json")
    a = ap.parse_args(argv)
    if a.child:
        kind, arg, path = a.child
        print(json.dumps(build(int(arg), path) if kind == "build" else run_chain(path) if kind == "chain"
                         else run_op(arg, path)))
        return 0
    results = []
    for n in a.rows:
        with tempfile.TemporaryDirectory(prefix="dj-scale-") as folder:
            path = os.path.join(folder, f"t{n}.arrow")
            res = _child(["build", str(n), path])
            res["ops"] = {name: _child(["op", name, path]) for name in a.ops}
            if a.chain:
                res["chain"] = _child(["chain", "-", path])
        results.append(res)
        print(f"rows {n} (minhash width {res['minhash_width']}, table {res['file_mb']:.0f} MB on disk)", flush=True)
        for label, group in (("alone", res["ops"]), ("chain", res.get("chain", {}))):
            for name, o in group.items():
                print(f"  {label} {name:32s} kept {o['kept']:>8}  wall {o['wall_s']:7.2f}s  cpu {o['cpu_s']:6.2f}s  "
                      f"anon peak +{o['anon_peak_growth_mb']:7.1f} MB (base {o['anon_base_mb']:.0f})  "
                      f"peak RSS +{o['peak_rss_growth_mb']:7.1f} MB", flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"report: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
