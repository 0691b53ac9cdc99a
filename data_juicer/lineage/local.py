"""Run a plan in this process: the simplest executor, and the reference for the others."""

from __future__ import annotations

import time
from typing import Callable, Iterable, Iterator, Optional

from data_juicer.lineage.compiler import Plan
from data_juicer.lineage.runtime import Batch, Finished, LineageResult, LineageRuntime


def invoke(call, batch: Batch, fn: Optional[Callable] = None):
    """Apply a call's function (``fn``: its built replica, default ``call.build()``) to a batch
    (the executors' one way of calling user code)."""
    fn = call.build() if fn is None else fn
    if call.pass_keys:
        return fn(*batch.args, keys=list(batch.keys))
    return fn(*batch.args)


class LocalRun:
    """An iterator of finished roots over one in-process run; ``result`` once exhausted.

    ``order``: ``completion`` (each root as soon as its outputs are final) or ``input`` (input
    order; at most ``window`` roots admitted beyond the oldest unfinished one).
    ``max_active_roots`` bounds the roots admitted and unfinished at once. ``Finished.at`` and
    the result's times are on ``clock`` (the caller's; ``time.time`` by default). Each call's
    replica is built once, when the run starts (``Call.setup``). ``forget``: each root's state is
    dropped as soon as it is handed over (``LineageRuntime.release``), so a long input runs in
    memory bounded by ``max_active_roots`` (or ``window``); the result then has counters only."""

    def __init__(self, plan: Plan, roots: Iterable[dict], *, max_active_roots: Optional[int] = None,
                 order: str = "completion", window: int = 1024, clock: Callable[[], float] = time.time,
                 forget: bool = False):
        if order not in ("completion", "input"):
            raise ValueError(f"order must be 'completion' or 'input', got {order!r}")
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.plan, self.roots, self.max_active, self.order, self.window = plan, roots, max_active_roots, order, window
        self.clock = clock
        self.forget = forget
        self.result: Optional[LineageResult] = None
        self.runtime: Optional[LineageRuntime] = None
        self._reported = 0
        self._gen = self._run()

    def __iter__(self):
        return self

    def __next__(self) -> Finished:
        return next(self._gen)

    @property
    def backlog(self) -> int:
        """Finished roots not handed over yet (0: the next ``next`` computes or waits first);
        in completion order. A consumer can batch what it received until this is 0."""
        rt = self.runtime
        return 0 if rt is None else len(rt.completed) - self._reported

    def _run(self) -> Iterator[Finished]:
        t0 = time.perf_counter()
        rt = self.runtime = LineageRuntime(self.plan, clock=self.clock, forget=self.forget)
        fns = {n.out: n.call.build() for n in self.plan.calls}
        source = iter(self.roots)
        exhausted = False
        reported, next_out, held = 0, 0, set()
        while True:
            while not exhausted and (self.max_active is None or rt.active_roots < self.max_active) and \
                    (self.order == "completion" or len(rt.roots) - next_out < self.window) and \
                    not (self.forget and rt.live_roots >= (self.max_active or self.window)):
                row = next(source, None)
                if row is None:
                    exhausted = True
                else:
                    rt.add_root(row)
            while reported < len(rt.completed):
                i = rt.completed[reported]
                reported += 1
                self._reported = reported
                rt.trim_completed(reported)
                if self.order == "completion":
                    f = rt.finished(i)
                    rt.release(i)
                    yield f
                else:
                    held.add(i)
            while next_out in held:
                held.discard(next_out)
                f = rt.finished(next_out)
                rt.release(next_out)
                yield f
                next_out += 1
            ready = rt.ready_calls()
            if not ready:
                if rt.done and exhausted:
                    break
                if rt.done:
                    continue  # admission was held by the window or max_active_roots
                rt.check_progress(in_flight=0)
                continue
            call = ready[0]
            batch = rt.next_batch(call)
            if batch is None:
                continue
            try:
                out = invoke(rt.call_nodes[call].call, batch, fns[call])
            except Exception as e:  # recovery decides: retry, split, fail or abort
                rt.report_error(batch, e)
            else:
                rt.report(batch, out)
        self.result = LineageResult.from_runtime(rt, time.perf_counter() - t0)


def iter_local(plan: Plan, roots: Iterable[dict], **options) -> LocalRun:
    """Yield each root as a ``Finished`` as soon as it is (see ``LocalRun`` for the options)."""
    return LocalRun(plan, roots, **options)


def run_local(plan: Plan, roots: Iterable[dict], *, max_active_roots: Optional[int] = None,
              on_complete: Optional[Callable[[int, dict], None]] = None,
              on_parent: Optional[Callable[[Finished], None]] = None, order: str = "completion",
              window: int = 1024, clock: Callable[[], float] = time.time) -> LineageResult:
    """Run ``plan`` over ``roots`` (one dict of input values each), one batch at a time.

    ``on_parent(finished)`` is called with each root as it finishes (``order``/``window`` as in
    ``LocalRun``); ``on_complete(index, outputs)`` is the older form, with the raw outputs.
    """
    run = LocalRun(plan, roots, max_active_roots=max_active_roots, order=order, window=window, clock=clock)
    for f in run:
        if on_parent is not None:
            on_parent(f)
        if on_complete is not None:
            on_complete(f.index, run.runtime.root_outputs(f.index))
    return run.result
