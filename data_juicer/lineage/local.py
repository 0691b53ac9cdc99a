"""Run a plan in this process: the simplest executor, and the reference for the others."""

from __future__ import annotations

import time
from typing import Callable, Iterable, Optional

from data_juicer.lineage.compiler import Plan
from data_juicer.lineage.runtime import Batch, LineageResult, LineageRuntime


def invoke(call, batch: Batch):
    """Apply a call's function to a batch (the executors' one way of calling user code)."""
    if call.pass_keys:
        return call.fn(*batch.args, keys=list(batch.keys))
    return call.fn(*batch.args)


def run_local(plan: Plan, roots: Iterable[dict], *, max_active_roots: Optional[int] = None,
              on_complete: Optional[Callable[[int, dict], None]] = None) -> LineageResult:
    """Run ``plan`` over ``roots`` (one dict of input values each), one batch at a time.

    ``max_active_roots`` bounds how many roots are admitted and unfinished at once;
    ``on_complete(index, outputs)`` is called as each root completes.
    """
    t0 = time.perf_counter()
    rt = LineageRuntime(plan)
    source = iter(roots)
    exhausted = False
    reported = 0
    while True:
        while not exhausted and (max_active_roots is None or rt.active_roots < max_active_roots):
            row = next(source, None)
            if row is None:
                exhausted = True
            else:
                rt.add_root(row)
        if on_complete is not None:
            for i in rt.completed[reported:]:
                on_complete(i, rt.root_outputs(i))
            reported = len(rt.completed)
        ready = rt.ready_calls()
        if not ready:
            if rt.done and exhausted:
                break
            rt.check_progress(in_flight=0)
            continue
        call = ready[0]
        batch = rt.next_batch(call)
        if batch is None:
            continue
        try:
            out = invoke(rt.call_nodes[call].call, batch)
        except Exception as e:  # recovery decides: retry, split, fail or abort
            rt.report_error(batch, e)
        else:
            rt.report(batch, out)
    return LineageResult.from_runtime(rt, time.perf_counter() - t0)
