#!/usr/bin/env python
"""Our MinHash op alone, in one process, without the executor: what the op itself costs.

  python op_mem.py CORPUS.jsonl OUT_DIR [--short_texts shared|whole|keep] [--simplify] [--batch 1000]

Streams the corpus in batches (``json`` per line, only the text and id kept for the batch),
runs the op's hashing (``compute_hash``) on each batch, keeps the signature column as Arrow
chunks, then runs the op's dataset-level step (``process``) over a minimal dataset facade that
holds only that column. Writes the kept ids to ``OUT_DIR/kept.txt`` and, to ``OUT_DIR/mem.json``,
the resident memory after imports and op construction (``base``), the peak (``VmHWM``), and
the seconds of each phase. ``peak - base`` is the op's own memory; the rest is the interpreter
and its imports (numpy, pyarrow and its first array, numba and the compiled kernels, loguru,
pydantic).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa


def rss_mb(field: str = "VmRSS") -> float:
    """This process's resident memory now (``VmRSS``) or at its peak (``VmHWM``; unlike
    ``ru_maxrss`` it starts afresh at exec, not with the parent's peak)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


class Facade:
    """The part of the dataset facade the op's ``process`` uses: its length, the hash column, and
    selecting rows (recorded, not applied: there are no other columns)."""

    def __init__(self, columns: dict, n: int, rows=None):
        self._cols, self._n, self.kept = columns, n, rows

    def __len__(self):
        return self._n

    @property
    def column_names(self):
        return list(self._cols)

    def arrow_column(self, name):
        return self._cols[name]

    def remove_columns(self, names):
        return Facade({k: v for k, v in self._cols.items() if k not in names}, self._n, self.kept)

    def select(self, indices):
        return Facade(self._cols, len(indices), np.asarray(indices))

    def rows(self, indices):
        return [{} for _ in indices]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--short_texts", default="shared")
    ap.add_argument("--simplify", action="store_true")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--bands", type=int, default=14)
    ap.add_argument("--rows", type=int, default=8)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    from data_juicer.ops.registry import OPERATORS
    from data_juicer.utils.constant import HashKeys

    op = OPERATORS.get("document_minhash_deduplicator")(
        tokenization="space", window_size=a.window, lowercase=True, num_permutations=a.bands * a.rows,
        num_bands=a.bands, num_rows_per_band=a.rows, short_texts=a.short_texts, simplify=a.simplify)
    pa.array([b""], type=pa.binary())  # Arrow's first array loads its libraries (~50 MB, once per process)
    t_init = time.perf_counter()
    base = rss_mb()
    ids, chunks = [], []
    with open(a.corpus, encoding="utf-8") as f:
        while True:
            batch = [json.loads(line) for _, line in zip(range(a.batch), f)]
            if not batch:
                break
            ids.extend(d["id"] for d in batch)
            sig = op.compute_hash({"text": [d["text"] for d in batch]})[HashKeys.minhash]
            chunks.append(pa.array(sig, type=pa.binary()))
            del batch, sig
    t_hash = time.perf_counter()
    after_hash = rss_mb()
    ds = Facade({HashKeys.minhash: pa.chunked_array(chunks, type=pa.binary())}, len(ids))
    del chunks
    out, _ = op.process(ds)
    t_proc = time.perf_counter()
    kept = range(len(ids)) if out.kept is None else out.kept.tolist()
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "kept.txt").write_text("".join(f"{ids[i]}\n" for i in kept), encoding="utf-8")
    peak = rss_mb("VmHWM")
    mem = {"base_rss_mb": base, "after_hash_rss_mb": after_hash, "peak_rss_mb": peak, "op_mb": peak - base,
           "import_init_s": t_init - t0, "hash_s": t_hash - t_init, "process_s": t_proc - t_hash,
           "docs": len(ids), "kept": len(kept)}
    (a.out / "mem.json").write_text(json.dumps(mem, indent=1) + "\n")
    print("mem:", json.dumps(mem), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
