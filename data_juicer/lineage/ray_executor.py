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


class _DriverReplica:
    """A replica of a CPU call in a driver thread, for the seconds its actors take to start.

    Starting a Ray worker process costs seconds (more on a loaded machine), and nothing the
    actors hold can finish before that. Meanwhile this replica is built in a thread (its
    ``setup`` too) and runs one batch at a time, so the first parents finish as soon as the
    driver can compute them. It takes no batch once any actor of its pool has answered (the
    run then uses exactly the resources the call declares); the batch it holds finishes. With
    ``fresh_queued`` it takes only parents with nothing in flight for the call, as a batch queued
    at a busy replica does."""

    def __init__(self, call):
        from concurrent.futures import ThreadPoolExecutor

        self.exec = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"lineage-{call.name}")
        self.built = self.exec.submit(Replica, call)
        self.current = None  # (future, batch) in flight
        self.retired = False

    def ready(self) -> bool:
        """Built and idle (a build that raised retires it: the actors will report that error)."""
        if self.retired or self.current is not None or not self.built.done():
            return False
        if self.built.exception() is not None:
            self.retired = True
            return False
        return True

    def submit(self, batch) -> None:
        replica = self.built.result()
        self.current = (self.exec.submit(replica.run, batch.args, list(batch.keys)), batch)

    def take_done(self):
        """(batch, (ok, payload, skipped)) when the batch it holds is done, else None."""
        if self.current is None or not self.current[0].done():
            return None
        fut, batch = self.current
        self.current = None
        return batch, fut.result()

    def withdraw(self, keys) -> int:
        if self.current is None or not self.built.done() or self.built.exception() is not None:
            return 0
        held = set(self.current[1].keys)
        ks = [k for k in keys if k in held]
        return self.built.result().withdraw(ks) if ks else 0

    def close(self) -> None:
        self.retired = True
        self.exec.shutdown(wait=False)


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
        self.up = False  # an actor has answered (its worker process started)

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
    :param forget: drop each root's state as soon as it is handed over (``LineageRuntime.release``):
        the driver's memory is bounded by the roots admitted at once (``input_batch_size`` x
        ``max_active_input_batches``, or ``window``), not by the input; the result has counters only
    :param driver_start: while a CPU call's actors start (a Ray worker process takes seconds), a
        replica of it built in a driver thread runs its batches, one at a time; it stops taking
        batches as soon as an actor answers. GPU calls never, nor calls declared with
        ``Call(driver_start=False)`` (a setup too heavy to build twice: the driver would hold a copy)

    The generator's ``.result`` (on the ``RayRun`` it returns) is the ``LineageResult`` once it is
    exhausted. Breaking out of the loop stops the run and frees its actors."""
    return RayRun(plan, roots, **options)


class RayRun:
    """An iterator of finished roots over one Ray run; ``result`` once exhausted."""

    def __init__(self, plan: Plan, roots: Iterable[dict], *, order: str = "completion", window: int = 1024,
                 clock: Callable[[], float] = time.time, input_batch_size: int = 256,
                 max_active_input_batches: int = 4, slots_per_replica: int = 2, stall_timeout_s: float = 600.0,
                 fresh_queued: bool = True, driver_start: bool = True, forget: bool = False):
        if order not in ("completion", "input"):
            raise ValueError(f"order must be 'completion' or 'input', got {order!r}")
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.plan, self.roots, self.order, self.window, self.clock = plan, roots, order, window, clock
        self.input_batch_size, self.max_active = input_batch_size, max_active_input_batches
        self.slots, self.stall_timeout_s = slots_per_replica, stall_timeout_s
        self.fresh_queued = fresh_queued
        self.driver_start = driver_start
        self.forget = forget
        self.result: Optional[LineageResult] = None
        self.runtime: Optional[LineageRuntime] = None
        self._reported = 0
        self._gen = self._run()

    def __iter__(self):
        return self

    def __next__(self) -> Finished:
        return next(self._gen)

    def close(self) -> None:
        self._gen.close()

    @property
    def backlog(self) -> int:
        """Finished roots not handed over yet (0: the next ``next`` dispatches or waits first)."""
        rt = self.runtime
        return 0 if rt is None else len(rt.completed) - self._reported

    def _run(self) -> Iterator[Finished]:
        import ray

        from data_juicer.lineage.failures import LineageDeadlock

        if not ray.is_initialized():
            ray.init(ignore_reinit_error=True)
        plan, clock = self.plan, self.clock
        t0 = time.perf_counter()
        rt = self.runtime = LineageRuntime(plan, clock=clock, forget=self.forget)
        # the whole cluster, not what is free this instant: a previous run's actors give their CPUs back
        # with a delay, and pools waiting for them are fine (the stall timeout still guards a real hang)
        cpus = plan_cpus(plan, ray.cluster_resources())
        # the driver replicas first: their build starts while the actors are being created
        helpers = {n.out: _DriverReplica(n.call) for n in plan.calls
                   if not n.call.inline and self.driver_start and n.call.driver_start and not n.call.num_gpus}
        pools = {n.out: _Pool(ray, n, self.slots, cpus[n.out]) for n in plan.calls if not n.call.inline}
        inline = {n.out: n.call.build() for n in plan.calls if n.call.inline}
        helper_batches = 0
        source = iter(self.roots)
        exhausted = False
        active: deque[tuple[int, int]] = deque()  # (first root, end) of admitted input batches
        in_flight: dict = {}  # object ref -> (batch, pool, replica)
        admitted_batches = 0
        reported = 0  # rt.completed[:reported] have been handed over (completion order)
        next_out, held = 0, {}  # input order: the next index to hand over, finished ones waiting for it
        withdrawn_sent = 0
        cap = self.window if self.order == "input" else self.input_batch_size * self.max_active  # forget mode
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
                        if self.forget and rt.live_roots >= cap:  # finished, not yet handed over
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
                    self._reported = reported
                    rt.trim_completed(reported)
                    if self.order == "completion":
                        f = rt.finished(i)
                        rt.release(i)
                        yield f
                    else:
                        held[i] = True
                while next_out in held:
                    del held[next_out]
                    f = rt.finished(next_out)
                    rt.release(next_out)
                    yield f
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
                    helper = helpers.get(call)
                    if helper is not None:
                        if pool.up:
                            if helper.current is None:
                                helper.close()
                                del helpers[call]
                        elif helper.ready():  # first pick: the actors' slots wait behind a starting worker
                            # parents with items waiting at a starting actor stay there (fresh_queued)
                            batch = rt.next_batch(call, queued=self.fresh_queued)
                            if batch is not None:
                                helper.submit(batch)
                                helper_batches += 1
                    while (slot := pool.free()) is not None:
                        batch = rt.next_batch(call, queued=self.fresh_queued and pool.load[slot] > 0)
                        if batch is None:
                            break
                        in_flight[pool.submit(slot, batch)] = (batch, pool, slot)
                helped = False
                for call, helper in list(helpers.items()):
                    got = helper.take_done()
                    if got is not None:
                        helped = True
                        hb, (ok, payload, skipped) = got
                        if ok:
                            rt.report(hb, payload, skipped=skipped)
                        else:
                            rt.report_error(hb, payload, skipped=skipped)
                helping = any(h.current is not None for h in helpers.values())
                if not in_flight and not helping and not helped:
                    if rt.done and exhausted:
                        break
                    if not rt.has_ready() and reported == len(rt.completed):
                        rt.check_progress(in_flight=0)
                    continue
                done = []
                if in_flight:
                    if helped or ran_inline or any(len(rt.queues[c]) for c in inline):
                        timeout = 0.0  # poll: driver work is waiting
                    elif helping:
                        timeout = 0.005  # a driver replica is computing: poll both
                    else:
                        timeout = self.stall_timeout_s
                    done, _ = ray.wait(list(in_flight), num_returns=1, timeout=timeout)
                    if not done and timeout == self.stall_timeout_s:
                        raise LineageDeadlock({"stalled_s": self.stall_timeout_s, **rt.progress()})
                elif helping and not helped:
                    time.sleep(0.002)
                for ref in done:
                    batch, pool, slot = in_flight.pop(ref)
                    pool.returned(slot, batch)
                    pool.up = True
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
                        if call in helpers:
                            withdrawn_sent += helpers[call].withdraw(ks)
        finally:
            for h in helpers.values():
                h.close()
            for pool in pools.values():
                for a in pool.actors:
                    ray.kill(a, no_restart=True)
        self.result = LineageResult.from_runtime(rt, time.perf_counter() - t0, input_batches=admitted_batches,
                                                 cpus=cpus, withdrawals_sent=withdrawn_sent,
                                                 driver_batches=helper_batches)
