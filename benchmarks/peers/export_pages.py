#!/usr/bin/env python
"""What the export's per-batch page hand-back costs on a large export:

  python benchmarks/peers/export_pages.py drop     # as the exporter does (MappedPages.drop_rows per batch)
  python benchmarks/peers/export_pages.py nodrop   # without it (the text handed back only at the end)

A memory-mapped Arrow stream file of 500,000 rows (100 chunks, ~117 MB; written once to ``--dir``), of
which 370,000 rows in table order (a dedup's kept rows) are written as JSON lines by the exporter's
``_write_range``; prints CPU and wall seconds and the process's RSS high-water mark. Run alternately.
"""
from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
import pyarrow as pa

from data_juicer.core import exporter as ex
from data_juicer.ops.common.mapped_pages import MappedPages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["drop", "nodrop"])
    ap.add_argument("--dir", default="/tmp/dj-export-pages")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    path = os.path.join(a.dir, "big.arrow")
    if not os.path.exists(path):
        schema = pa.schema([("id", pa.string()), ("text", pa.string())])
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, schema) as w:
            for c in range(100):
                w.write_table(pa.table({"id": [f"d{c}-{r}" for r in range(5000)],
                                        "text": [f"chunk {c} row {r} " + "word " * 40 for r in range(5000)]}))
    table = pa.ipc.open_stream(pa.memory_map(path)).read_all()
    rows = np.sort(np.random.RandomState(0).choice(len(table), 370_000, replace=False))
    if a.mode == "nodrop":
        MappedPages.drop_rows = lambda self, lo, hi: None
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.time()
    with open(os.path.join(a.dir, "out.jsonl"), "w", encoding="utf-8") as f:
        ex._write_range(f, table, rows, 0, len(rows), 256)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    print(f"{a.mode}: CPU {cpu:.2f} s, wall {time.time() - t0:.2f} s, RSS high-water mark {r1.ru_maxrss // 1024} MB")


if __name__ == "__main__":
    main()
