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
from typing import Iterable, Optional

from loguru import logger

from data_juicer.lineage.compiler import Plan
from data_juicer.lineage.runtime import LineageResult, LineageRuntime


class _CallWorker:
    """One replica of a call: applies its function to batches of arguments."""

    def __init__(self, fn, pass_keys: bool):
        self.fn, self.pass_keys = fn, pass_keys

    def run(self, args, keys):
        try:
            out = self.fn(*args, keys=keys) if self.pass_keys else self.fn(*args)
            return True, list(out) if isinstance(out, tuple) else out
        except Exception as e:  # the driver's recovery policy decides what happens
            try:
                import pickle

                pickle.dumps(e)
                return False, e
            except Exception:
                return False, RuntimeError(f"{type(e).__name__}: {e}")


def plan_cpus(plan: Plan, cluster: dict) -> dict[str, float]:
    """CPUs per replica of each call: its own ``num_cpus``, or an equal share of what is left.

    Every pool is alive for the whole run, so a plan that needs more than the cluster has would
    wait for ever: that is a clear error here instead.
    """
    cpus, gpus = float(cluster.get("CPU", 0)), float(cluster.get("GPU", 0))
    calls = [n for n in plan.calls]
    fixed = sum(n.call.num_cpus * n.call.replicas for n in calls if n.call.num_cpus is not None)
    auto = sum(n.call.replicas for n in calls if n.call.num_cpus is None)
    need_gpu = sum(n.call.num_gpus * n.call.replicas for n in calls)
    share = min(1.0, (cpus - fixed) / auto) if auto else 0.0
    if fixed > cpus or (auto and share < 0.01) or need_gpu > gpus:
        parts = ", ".join(f"{n.call.name} {n.call.replicas}x({'auto' if n.call.num_cpus is None else n.call.num_cpus} "
                          f"CPU, {n.call.num_gpus:g} GPU)" for n in calls)
        raise ValueError(f"the lineage calls' actor pools need more than the Ray cluster has ({cpus:g} CPUs, "
                         f"{gpus:g} GPUs): {parts}. Lower num_cpus/num_gpus or replicas, or add resources")
    return {n.out: n.call.num_cpus if n.call.num_cpus is not None else share for n in calls}


class _Pool:
    def __init__(self, ray, node, slots_per_replica: int, num_cpus: float):
        c = node.call
        self.ray = ray
        self.call = c
        opts = {"num_cpus": num_cpus, "num_gpus": c.num_gpus, "max_concurrency": 1}
        self._cls = ray.remote(_CallWorker).options(**opts)
        self.actors = [self._cls.remote(c.fn, c.pass_keys) for _ in range(c.replicas)]
        self.load = [0] * c.replicas
        self.slots = slots_per_replica
        self.deaths = 0  # replicas lost since the last batch that came back

    def free(self) -> Optional[int]:
        i = min(range(len(self.load)), key=self.load.__getitem__)
        return i if self.load[i] < self.slots else None

    def submit(self, i: int, batch):
        self.load[i] += 1
        args = self.ray.put(batch.args)  # the payload goes through the object store once
        return self.actors[i].run.remote(args, list(batch.keys))

    def replace(self, i: int) -> None:
        self.actors[i] = self._cls.remote(self.call.fn, self.call.pass_keys)


def run_ray(plan: Plan, roots: Iterable[dict], *, input_batch_size: int = 256, max_active_input_batches: int = 4,
            slots_per_replica: int = 2, stall_timeout_s: float = 600.0) -> LineageResult:
    """Run ``plan`` over ``roots`` on the connected Ray cluster (``ray.init`` if none).

    :param input_batch_size: roots admitted together
    :param max_active_input_batches: input batches admitted and not yet complete at once
    :param slots_per_replica: batches queued per actor (2 keeps an actor busy while the driver reports)
    :param stall_timeout_s: no report for this long raises ``LineageDeadlock`` with the counters
    """
    import ray

    from data_juicer.lineage.failures import LineageDeadlock

    if not ray.is_initialized():
        ray.init(ignore_reinit_error=True)
    t0 = time.perf_counter()
    rt = LineageRuntime(plan)
    # the whole cluster, not what is free this instant: a previous run's actors give their CPUs back
    # with a delay, and pools waiting for them are fine (the stall timeout still guards a real hang)
    cpus = plan_cpus(plan, ray.cluster_resources())
    pools = {n.out: _Pool(ray, n, slots_per_replica, cpus[n.out]) for n in plan.calls}
    source = iter(roots)
    exhausted = False
    active: deque[tuple[int, int]] = deque()  # (first root, end) of admitted input batches
    in_flight: dict = {}  # object ref -> (batch, pool, replica)
    admitted_batches = 0
    try:
        while True:
            while active and all(rt.is_complete(i) for i in range(*active[0])):
                active.popleft()
            while not exhausted and len(active) < max_active_input_batches:
                start = len(rt.roots)
                for _ in range(input_batch_size):
                    row = next(source, None)
                    if row is None:
                        exhausted = True
                        break
                    rt.add_root(row)
                if len(rt.roots) > start:
                    active.append((start, len(rt.roots)))
                    admitted_batches += 1
            for call in rt.ready_calls():
                pool = pools[call]
                while (slot := pool.free()) is not None:
                    batch = rt.next_batch(call)
                    if batch is None:
                        break
                    in_flight[pool.submit(slot, batch)] = (batch, pool, slot)
            if not in_flight:
                if rt.done and exhausted:
                    break
                if not rt.has_ready():
                    rt.check_progress(in_flight=0)
                continue
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=stall_timeout_s)
            if not done:
                raise LineageDeadlock({"stalled_s": stall_timeout_s, **rt.progress()})
            for ref in done:
                batch, pool, slot = in_flight.pop(ref)
                pool.load[slot] -= 1
                try:
                    ok, payload = ray.get(ref)
                except ray.exceptions.RayActorError as e:  # the replica died: replace it, let recovery decide
                    pool.deaths += 1
                    if pool.deaths > 2 * len(pool.actors) + 1:  # it cannot even start (e.g. its code won't import)
                        raise RuntimeError(f"lineage: the replicas of call '{pool.call.name}' keep dying "
                                           f"({pool.deaths} in a row without a result): {e}") from e
                    logger.warning(f"lineage: a replica of call '{pool.call.name}' died; replacing it")
                    pool.replace(slot)
                    ok, payload = False, e
                else:
                    pool.deaths = 0
                if ok:
                    rt.report(batch, payload)
                else:
                    rt.report_error(batch, payload)
    finally:
        for pool in pools.values():
            for a in pool.actors:
                ray.kill(a, no_restart=True)
    return LineageResult.from_runtime(rt, time.perf_counter() - t0, input_batches=admitted_batches, cpus=cpus)

