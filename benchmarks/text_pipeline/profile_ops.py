"""Per-op CPU cost of a recipe's row-wise ops, in one process, on the first N corpus documents.

    python benchmarks/text_pipeline/profile_ops.py                    # benchmark recipe, 5,000 docs
    python benchmarks/text_pipeline/profile_ops.py --n 2000 --config R.yaml --repeat 3

Each batch goes through the ops in recipe order exactly as the executor's fused pass does
(filters drop rows before the next op). CPU time (``time.process_time``) is charged per op, so
the figures stay meaningful on a busy machine; wall time is printed beside it.
Deduplicators are timed for their hashing step only (``compute_hash``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(HERE, "recipe.yaml"))
    ap.add_argument("--corpus", default=os.path.join(HERE, "data", "corpus_50000_s42.jsonl"))
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--batch_size", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=1, help="take the minimum over this many runs")
    args = ap.parse_args(argv)

    from data_juicer.config.recipe import load_recipe
    from data_juicer.utils.batch import rows_to_batch

    recipe = load_recipe(["--config", args.config, "--dataset_path", args.corpus], check_paths=False)
    ops = [spec.build() for spec in recipe.ops]
    with open(args.corpus, encoding="utf-8") as f:
        rows = [json.loads(line) for line in itertools.islice(f, args.n)]

    best: dict[int, list[float]] = {}
    for _ in range(args.repeat):
        cpu = [0.0] * len(ops)
        wall = [0.0] * len(ops)
        kept = [0] * len(ops)
        for start in range(0, len(rows), args.batch_size):
            batch = rows_to_batch([dict(r) for r in rows[start:start + args.batch_size]])
            if any(op.uses for op in ops):
                batch["__dj__context__"] = [{} for _ in range(len(batch["text"]))]
            for i, op in enumerate(ops):
                c, w = time.process_time(), time.perf_counter()
                batch = op.run_batch(batch)  # a deduplicator's run_batch is its hashing
                cpu[i] += time.process_time() - c
                wall[i] += time.perf_counter() - w
                kept[i] += len(batch["text"])
        for i in range(len(ops)):
            if i not in best or cpu[i] < best[i][0]:
                best[i] = [cpu[i], wall[i], kept[i]]

    total = sum(v[0] for v in best.values())
    print(f"{len(rows)} documents, {len(ops)} ops, batch {args.batch_size}, best of {args.repeat}")
    print(f"{'op':40s} {'cpu s':>8s} {'wall s':>8s} {'ms/1k in':>9s} {'kept':>7s} {'share':>6s}")
    n_in = len(rows)
    for i, op in enumerate(ops):
        cpu, wall, k = best[i]
        print(f"{op.name:40s} {cpu:8.3f} {wall:8.3f} {1000 * cpu / max(n_in, 1) * 1000:9.1f} {k:7d} "
              f"{100 * cpu / total:5.1f}%")
        n_in = k
    print(f"{'total':40s} {total:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
