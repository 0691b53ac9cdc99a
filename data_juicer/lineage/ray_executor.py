"""Run a plan on Ray: one persistent actor pool per call, payloads through the object store.

Each call gets ``replicas`` actors with its own ``num_cpus``/``num_gpus``; an actor holds the
call's function for the whole run (a model loads once per replica). The driver keeps the
``LineageRuntime`` (the single source of truth), hands physical batches to idle actors, and
reports results back as they arrive, in any order. Roots are admitted in input batches, with at
most ``max_active_input_batches`` unfinished at once, so memory stays bounded on long inputs.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Callable, Iterable, Iterator, Optional

from loguru import logger

from data_juicer.lineage.compiler import Plan
from data_juicer.lineage.local import invoke
from data_juicer.lineage.runtime import Finished, LineageResult, LineageRuntime


class Replica:
    """One replica of a call, without Ray: builds its function once (``Call.setup``) and applies
    it to batches, dropping first the members it knows are doomed: keys the driver withdrew
    (``withdraw``), and siblings of an item that returned ``GroupFailure`` here (the replica
    knows that before the driver does, so the batch queued right behind skips them at once).
    ``run`` returns ``(ok, outputs or exception, skipped positions)``."""

    def __init__(self, call):
        import threading

        from data_juicer.lineage.failures import GroupFailure

        self.fn, self.pass_keys = call.build(), call.pass_keys
        self._gf = GroupFailure
        self.skip: set = set()  # keys the driver withdrew
        self.poisoned: set = set()  # (domain, parent path) with an item here that returned GroupFailure
        self.lock = threading.Lock()

    def _doomed(self, k) -> bool:
        return k in self.skip or (k.domain, k.path[:-1]) in self.poisoned

    def run(self, args, keys):
        skipped = ()
        if self.skip or self.poisoned:
            with self.lock:
                skipped = tuple(i for i, k in enumerate(keys) if self._doomed(k))
                self.skip.difference_update(keys[i] for i in skipped)
            if skipped:
                drop = set(skipped)
                keep = [i for i in range(len(keys)) if i not in drop]
                if not keep:
                    return True, [], skipped
                args = tuple([col[i] for i in keep] for col in args)
                keys = [keys[i] for i in keep]
        try:
            out = self.fn(*args, keys=keys) if self.pass_keys else self.fn(*args)
        except Exception as e:  # the driver's recovery policy decides what happens
            try:
                import pickle

                pickle.dumps(e)
                return False, e, skipped
            except Exception:
                return False, RuntimeError(f"{type(e).__name__}: {e}"), skipped
        out = list(out) if isinstance(out, tuple) else out
        if isinstance(out, list) and len(out) == len(keys):
            for k, o in zip(keys, out):
                if isinstance(o, self._gf) and len(k.path) > 1:
                    self.poisoned.add((k.domain, k.path[:-1]))
        return True, out, skipped

    def withdraw(self, keys) -> int:
        with self.lock:
            self.skip.update(keys)
        return len(keys)


def _worker_class(ray):
    """The replica actor: ``withdraw`` has its own concurrency group, so it runs while a batch
    computes and reaches the batches queued behind it."""

    @ray.remote(concurrency_groups={"control": 1})
    class CallWorker(Replica):
        @ray.method(concurrency_group="control")
        def withdraw(self, keys):
            return Replica.withdraw(self, keys)

    return CallWorker


def plan_cpus(plan: Plan, cluster: dict) -> dict[str, float]:
    """CPUs per replica of each call (``Plan.pool_cpus``; kept here for older callers)."""
    return plan.pool_cpus(cluster)


class _Pool:
    def __init__(self, ray, node, slots_per_replica: int, num_cpus: float):
        c = node.call
        self.ray = ray
        self.call = c
        self.node = node
        opts = {"num_cpus": num_cpus, "num_gpus": c.num_gpus, "max_concurrency": 1}
        self._cls = _worker_class(ray).options(**opts)
        self.actors = [self._cls.remote(c) for _ in range(c.replicas)]
        self.load = [0] * c.replicas
        self.slots = slots_per_replica
        self.deaths = 0  # replicas lost since the last batch that came back
        self.holder: dict = {}  # key of an item in flight -> the replica holding its batch

    def free(self) -> Optional[int]:
        i = min(range(len(self.load)), key=self.load.__getitem__)
        return i if self.load[i] < self.slots else None

    def submit(self, i: int, batch):
        self.load[i] += 1
        for k in batch.keys:
            self.holder[k] = i
        args = self.ray.put(batch.args)  # the payload goes through the object store once
        return self.actors[i].run.remote(args, list(batch.keys))

    def returned(self, i: int, batch) -> None:
        self.load[i] -= 1
        for k in batch.keys:
            if self.holder.get(k) == i:
                del self.holder[k]

    def withdraw(self, keys) -> int:
        """Tell each replica holding some of ``keys`` to skip them; returns how many were sent."""
        by_replica: dict[int, list] = {}
        for k in keys:
            i = self.holder.get(k)
            if i is not None:
                by_replica.setdefault(i, []).append(k)
        for i, ks in by_replica.items():
            self.actors[i].withdraw.remote(ks)
        return sum(len(ks) for ks in by_replica.values())

    def replace(self, i: int) -> None:
        self.actors[i] = self._cls.remote(self.call)


def run_ray(plan: Plan, roots: Iterable[dict], *, on_parent: Optional[Callable[[Finished], None]] = None,
            clock: Callable[[], float] = time.time, **options) -> LineageResult:
    """Run ``plan`` over ``roots`` on the connected Ray cluster (``ray.init`` if none) and return
    every root's outputs. ``on_parent(finished)`` is called with each root as it finishes (see
    ``iter_ray`` for that and the other options)."""
    stream = RayRun(plan, roots, clock=clock, **options)
    for f in stream:
        if on_parent is not None:
            on_parent(f)
    return stream.result


def iter_ray(plan: Plan, roots: Iterable[dict], **options) -> Iterator[Finished]:
    """Run ``plan`` on Ray and yield each root as a ``Finished`` as soon as its outputs are final.

    :param order: ``completion`` (as they finish) or ``input`` (input order; at most ``window``
        roots are admitted beyond the oldest unfinished one, so the reorder buffer is bounded)
    :param window: the reorder window for ``order='input'``
    :param clock: the caller's clock for ``Finished.at`` and the result's timestamps (``time.time``)
    :param input_batch_size: roots admitted together
    :param max_active_input_batches: input batches admitted and not yet complete at once
    :param slots_per_replica: batches queued per actor (2 keeps an actor busy while the driver reports)
    :param stall_timeout_s: no report for this long raises ``LineageDeadlock`` with the counters
    :param fresh_queued: a batch that will wait behind another at a busy replica takes only parents
        with nothing in flight for that call, so a failing parent has few siblings already sent

    The generator's ``.result`` (on the ``RayRun`` it returns) is the ``LineageResult`` once it is
    exhausted. Breaking out of the loop stops the run and frees its actors."""
    return RayRun(plan, roots, **options)


class RayRun:
    """An iterator of finished roots over one Ray run; ``result`` once exhausted."""

    def __init__(self, plan: Plan, roots: Iterable[dict], *, order: str = "completion", window: int = 1024,
                 clock: Callable[[], float] = time.time, input_batch_size: int = 256,
                 max_active_input_batches: int = 4, slots_per_replica: int = 2, stall_timeout_s: float = 600.0,
                 fresh_queued: bool = True):
        if order not in ("completion", "input"):
            raise ValueError(f"order must be 'completion' or 'input', got {order!r}")
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.plan, self.roots, self.order, self.window, self.clock = plan, roots, order, window, clock
        self.input_batch_size, self.max_active = input_batch_size, max_active_input_batches
        self.slots, self.stall_timeout_s = slots_per_replica, stall_timeout_s
        self.fresh_queued = fresh_queued
        self.result: Optional[LineageResult] = None
        self._gen = self._run()

    def __iter__(self):
        return self

    def __next__(self) -> Finished:
        return next(self._gen)

    def close(self) -> None:
        self._gen.close()

    def _run(self) -> Iterator[Finished]:
        import ray

        from data_juicer.lineage.failures import LineageDeadlock

        if not ray.is_initialized():
            ray.init(ignore_reinit_error=True)
        plan, clock = self.plan, self.clock
        t0 = time.perf_counter()
        rt = LineageRuntime(plan, clock=clock)
        # the whole cluster, not what is free this instant: a previous run's actors give their CPUs back
        # with a delay, and pools waiting for them are fine (the stall timeout still guards a real hang)
        cpus = plan_cpus(plan, ray.cluster_resources())
        pools = {n.out: _Pool(ray, n, self.slots, cpus[n.out]) for n in plan.calls if not n.call.inline}
        inline = {n.out: n.call.build() for n in plan.calls if n.call.inline}
        source = iter(self.roots)
        exhausted = False
        active: deque[tuple[int, int]] = deque()  # (first root, end) of admitted input batches
        in_flight: dict = {}  # object ref -> (batch, pool, replica)
        admitted_batches = 0
        reported = 0  # rt.completed[:reported] have been handed over (completion order)
        next_out, held = 0, {}  # input order: the next index to hand over, finished ones waiting for it
        withdrawn_sent = 0
        try:
            while True:
                while active and all(rt.is_complete(i) for i in range(*active[0])):
                    active.popleft()
                while not exhausted and len(active) < self.max_active and \
                        (self.order == "completion" or len(rt.roots) - next_out < self.window):
                    start = len(rt.roots)
                    for _ in range(self.input_batch_size):
                        if self.order == "input" and len(rt.roots) - next_out >= self.window:
                            break
                        row = next(source, None)
                        if row is None:
                            exhausted = True
                            break
                        rt.add_root(row)
                    if len(rt.roots) > start:
                        active.append((start, len(rt.roots)))
                        admitted_batches += 1
                # hand over what finished (roots can finish at admission: an empty expand)
                while reported < len(rt.completed):
                    i = rt.completed[reported]
                    reported += 1
                    if self.order == "completion":
                        yield rt.finished(i)
                    else:
                        held[i] = True
                while next_out in held:
                    del held[next_out]
                    yield rt.finished(next_out)
                    next_out += 1
                ran_inline = False
                for call in rt.ready_calls():
                    if call in inline:  # in the driver, now: one batch per pass, so reports are not held up
                        batch = rt.next_batch(call)
                        if batch is not None:
                            ran_inline = True
                            try:
                                out = invoke(rt.call_nodes[call].call, batch, inline[call])
                            except Exception as e:  # recovery decides
                                rt.report_error(batch, e)
                            else:
                                rt.report(batch, out)
                        continue
                    pool = pools[call]
                    while (slot := pool.free()) is not None:
                        batch = rt.next_batch(call, queued=self.fresh_queued and pool.load[slot] > 0)
                        if batch is None:
                            break
                        in_flight[pool.submit(slot, batch)] = (batch, pool, slot)
                if not in_flight:
                    if rt.done and exhausted:
                        break
                    if not rt.has_ready() and reported == len(rt.completed):
                        rt.check_progress(in_flight=0)
                    continue
                if ran_inline or any(len(rt.queues[c]) for c in inline):
                    done, _ = ray.wait(list(in_flight), num_returns=1, timeout=0)  # poll: driver work is waiting
                    if not done:
                        continue
                else:
                    done, _ = ray.wait(list(in_flight), num_returns=1, timeout=self.stall_timeout_s)
                if not done:
                    raise LineageDeadlock({"stalled_s": self.stall_timeout_s, **rt.progress()})
                for ref in done:
                    batch, pool, slot = in_flight.pop(ref)
                    pool.returned(slot, batch)
                    try:
                        ok, payload, skipped = ray.get(ref)
                    except ray.exceptions.RayActorError as e:  # the replica died: replace it, let recovery decide
                        pool.deaths += 1
                        if pool.deaths > 2 * len(pool.actors) + 1:  # it cannot even start (e.g. its setup raises)
                            raise RuntimeError(f"lineage: the replicas of call '{pool.call.name}' keep dying "
                                               f"({pool.deaths} in a row without a result): {e}") from e
                        logger.warning(f"lineage: a replica of call '{pool.call.name}' died; replacing it")
                        pool.replace(slot)
                        ok, payload, skipped = False, e, ()
                    else:
                        pool.deaths = 0
                    if ok:
                        rt.report(batch, payload, skipped=skipped)
                    else:
                        rt.report_error(batch, payload, skipped=skipped)
                doomed = rt.take_doomed()
                if doomed:
                    by_call: dict[str, list] = {}
                    for call, k in doomed:
                        by_call.setdefault(call, []).append(k)
                    for call, ks in by_call.items():
                        if call in pools:  # an inline call's batches never wait anywhere
                            withdrawn_sent += pools[call].withdraw(ks)
        finally:
            for pool in pools.values():
                for a in pool.actors:
                    ray.kill(a, no_restart=True)
        self.result = LineageResult.from_runtime(rt, time.perf_counter() - t0, input_batches=admitted_batches,
                                                 cpus=cpus, withdrawals_sent=withdrawn_sent)
