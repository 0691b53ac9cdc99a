#!/usr/bin/env python
"""Which op makes a pass worker's anonymous memory grow with the rows it has processed.

  python benchmarks/scale/worker_growth.py --n 20000          # the text recipe, first 20k docs of the 50k corpus

One process runs the recipe's row-wise ops batch by batch as a fused pass does (filters drop rows before the
next op; deduplicators hash), reading the corpus a batch at a time, and charges each rise of ``RssAnon`` to the
op during which it happened. A per-batch allocation that is freed again charges nothing; what stays (caches,
fragmentation, anything kept per row) is summed per op. The 50k run's timeline (``run.py``, ``timeline.tsv``)
shows each pass worker growing by ~60 MB over its 25k documents; this says where.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEXT = os.path.join(HERE, "..", "text_pipeline")


def _anon() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(TEXT, "recipe.yaml"))
    ap.add_argument("--corpus", default=os.path.join(TEXT, "data", "corpus_50000_s42.jsonl"))
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--batch_size", type=int, default=1000)
    ap.add_argument("--skip", type=int, default=2, help="batches run before counting (first-call caches, compiles)")
    ap.add_argument("--trim", action="store_true",
                    help="glibc malloc_trim(0) after each batch: hands freed heap pages back to the kernel, so "
                         "what is left is memory still in use (fragmentation vs things kept)")
    a = ap.parse_args(argv)
    trim = None
    if a.trim:
        import ctypes

        trim = ctypes.CDLL("libc.so.6").malloc_trim

    from data_juicer.config.recipe import load_recipe
    from data_juicer.utils.batch import rows_to_batch

    recipe = load_recipe(["--config", a.config, "--dataset_path", a.corpus], check_paths=False)
    ops = [spec.build() for spec in recipe.ops]
    grow = [0] * len(ops)
    start_anon = None
    trail = []
    with open(a.corpus, encoding="utf-8") as f:
        for b in itertools.count():
            rows = [json.loads(line) for line in itertools.islice(f, a.batch_size)]
            if not rows or b * a.batch_size >= a.n:
                break
            if b == a.skip:
                start_anon = _anon()
            batch = rows_to_batch(rows)
            del rows
            if any(op.uses for op in ops):
                batch["__dj__context__"] = [{} for _ in range(len(batch["text"]))]
            for i, op in enumerate(ops):
                before = _anon()
                batch = op.run_batch(batch)
                if b >= a.skip:
                    grow[i] += max(0, _anon() - before)
            del batch
            if trim is not None:
                trim(0)
            trail.append(round(_anon() / 2**20, 1))
    total = (_anon() - start_anon) / 2**20 if start_anon is not None else 0.0
    print(f"{min(a.n, len(trail) * a.batch_size)} docs, batch {a.batch_size}; RssAnon after each batch (MB): {trail}")
    print(f"growth after batch {a.skip}: {total:+.1f} MB; rises charged per op (MB):")
    for op, g in sorted(zip(ops, grow), key=lambda x: -x[1]):
        if g:
            print(f"  {op.name:40s} {g / 2**20:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
