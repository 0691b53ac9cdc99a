#!/usr/bin/env python
"""Where the CPU goes, adapter off and on: each op of the recipe order and of the adapted plan,
timed in CPU seconds on the same rows in one process.

  python benchmarks/adapter/profile_plan.py                   # wrong_order.yaml, 10,000 documents
  python benchmarks/adapter/profile_plan.py --num_docs 50000 --batch_size 1000

The rows are read from the corpus as the loader would give them (one columnar batch per
``--batch_size`` rows); the ops are built from the recipe; ``on`` is the plan the adapter makes
(probe, then ``optimize`` with the probe strategy), ``off`` the recipe order. Per op: rows in, rows
out, CPU seconds (``time.process_time``), and the probe's own CPU seconds. What is not here is the
fixed cost of a run (imports, loading, export, worker start-up): ``run.py`` measures the whole run.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "text_pipeline"))

import benchlib as bl  # noqa: E402
from make_corpus import make_corpus  # noqa: E402


def read_batches(path: Path, batch_size: int) -> list[dict]:
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    cols = list(rows[0])
    return [{c: [r.get(c) for r in rows[i:i + batch_size]] for c in cols} for i in range(0, len(rows), batch_size)]


def run_plan(ops, batches) -> list[list]:
    from data_juicer.utils.batch import batch_len
    from data_juicer.utils.constant import Fields

    per_op = [[op.name, 0, 0, 0.0] for op in ops]
    needs_context = any(op.uses for op in ops)
    for batch in batches:
        work = {k: list(v) for k, v in batch.items()}
        if needs_context:
            work[Fields.context] = [{} for _ in range(batch_len(work))]
        for op, rec in zip(ops, per_op):
            n = batch_len(work)
            if not n:
                break
            t = time.process_time()
            work = op.run_batch(work)
            rec[3] += time.process_time() - t
            rec[1] += n
            rec[2] += batch_len(work)
    return per_op


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", type=Path, default=HERE / "wrong_order.yaml")
    ap.add_argument("--num_docs", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--batch_size", type=int, default=1000)
    a = ap.parse_args(argv)

    from data_juicer.core.adapter import Adapter
    from data_juicer.ops.build import build_ops

    corpus = make_corpus(a.num_docs, a.seed)
    recipe = bl.load_yaml(a.recipe)
    batches = read_batches(corpus, a.batch_size)
    rows = sum(len(next(iter(b.values()))) for b in batches)
    results = {}
    for mode in ("off", "on"):
        ops = build_ops(recipe["process"], {"text_key": "text"}, where=str(a.recipe))
        # the model loads once per process in a run too: load it before timing, for both plans
        run_plan(ops, [{k: v[:4] for k, v in batches[0].items()}])
        probe_cpu = 0.0
        if mode == "on":
            adapter = Adapter({})
            head = {k: [v for b in batches for v in b[k]][:adapter.probe_samples] for k in batches[0]}
            probes = adapter.probe_small_batch(head, ops)
            probe_cpu = adapter.probe_cpu_seconds
            ops = adapter.optimize(ops, probes, reorder=True)
        per_op = run_plan(ops, batches)
        total = sum(r[3] for r in per_op)
        results[mode] = {"ops": per_op, "ops_cpu_s": total, "probe_cpu_s": probe_cpu,
                         "rows_out": per_op[-1][2] if per_op else rows}
        print(f"\n{mode}: {rows} rows, {len(per_op)} ops, {total:.2f} CPU s in the ops"
              + (f" + {probe_cpu:.2f} s probe" if mode == "on" else ""))
        print(bl.fmt_table(["op", "in", "out", "CPU s", "ms/row"],
                           [[n[:60], i, o, f"{s:.2f}", f"{1000 * s / i:.3f}" if i else "-"] for n, i, o, s in per_op]))
    off, on = results["off"], results["on"]
    print(f"\nops: {off['ops_cpu_s']:.2f} CPU s off, {on['ops_cpu_s'] + on['probe_cpu_s']:.2f} on (probe included): "
          f"{off['ops_cpu_s'] / (on['ops_cpu_s'] + on['probe_cpu_s']):.2f}x; rows out {off['rows_out']} / {on['rows_out']}")
    return 0 if off["rows_out"] == on["rows_out"] else 1


if __name__ == "__main__":
    sys.exit(main())
