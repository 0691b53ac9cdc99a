#!/usr/bin/env python
"""Lineage engine benchmark: a long-tailed fan-out workload run by our engine, Ray Data and RayOrch.

  python benchmarks/lineage/run.py                          # default: 200 parents, batch 32 (~3 min on a loaded 2-core machine)
  python benchmarks/lineage/run.py --parents 2000 --replicas 4 --num-cpus 8
  python benchmarks/lineage/run.py --systems ours,raydata   # a subset (ours, local, raydata, rayorch)

The program is the same everywhere: ``expand`` (a parent becomes its 1..max children) -> a batched
child function (``sleep(fixed + per_item * len(batch))``, standing in for a model) -> ``reduce`` (the
parent's child values back, in order) -> a parent-level ``combine`` that stamps the time the parent
is complete. Systems:

- ours:    ``data_juicer.lineage.ray_executor.run_ray`` (one actor pool per call);
- local:   ``data_juicer.lineage.run_local`` in this process (one replica: an extra column);
- raydata: Ray Data ``flat_map`` -> ``map_batches`` (actor pool) -> ``groupby(parent).map_groups``
           (sorts each group by ordinal);
- rayorch: ``rayorch`` 0.1.1 (``F.expand`` -> ``RayModule`` -> ``F.reduce`` -> ``RayModule``).

Then a failure-injection run: child 0 of the ``--poison`` largest parents returns ``GroupFailure``
(ours, rayorch; Ray Data has no equivalent: the child returns an error marker and the regroup drops
the parent, its siblings all run). Every healthy parent's output must equal the clean run's (asserted).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


# ------------------------------------------------------------------ workload
def make_workload(n_parents: int, max_children: int, zipf_s: float, seed: int) -> list[int]:
    """Children per parent: Zipf-like on 1..max_children (P(k) ~ k^-s), seeded, with one parent at the max."""
    rng = np.random.default_rng(seed)
    k = np.arange(1, max_children + 1)
    p = k ** -zipf_s
    counts = rng.choice(k, size=n_parents, p=p / p.sum())
    counts[rng.integers(n_parents)] = max_children  # the tail is always there
    return [int(c) for c in counts]


def child_value(pid: int, j: int) -> int:
    return (pid * 7919 + j * 104729) % 1000003


def child_compute(items, fixed_s: float, per_item_s: float, failure_cls):
    """The stand-in model: one fixed cost per call plus a per-item cost. ``items``: (pid, j, poison)."""
    time.sleep(fixed_s + per_item_s * len(items))
    return [failure_cls("poisoned child") if (poison and j == 0) else child_value(pid, j)
            for pid, j, poison in items]


def expand_specs(specs):
    return [[(s["pid"], j, s["poison"]) for j in range(s["n"])] for s in specs]


def combine(groups):
    now = time.time()
    return [(list(g), now) for g in groups]


class Sys:
    """One system's run: wall time, child fill, first parent, outputs per parent (None: parent lost)."""

    def __init__(self, name, wall, cpu, fill, first, outputs, child_calls, never_dispatched=None, batches=None):
        self.name, self.wall, self.cpu, self.fill, self.first = name, wall, cpu, fill, first
        self.outputs, self.child_calls, self.never_dispatched, self.batches = outputs, child_calls, never_dispatched, batches


class CpuMeter:
    """user+sys CPU seconds of this process and all its descendants (Ray's daemons and workers) over a
    run, sampled per process every 0.2 s (a process that exits loses at most its last 0.2 s)."""

    def __init__(self):
        import threading

        self.me = psutil.Process()
        self.base = self._sample()
        self.last = dict(self.base)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _sample(self) -> dict:
        out = {}
        for p in [self.me] + self.me.children(recursive=True):
            try:
                t = p.cpu_times()
                out[p.pid] = t.user + t.system
            except psutil.Error:
                pass
        return out

    def _loop(self):
        while not self.stop.wait(0.2):
            self.last.update(self._sample())

    def done(self) -> float:
        self.stop.set()
        self.thread.join()
        self.last.update(self._sample())
        return sum(v - self.base.get(pid, 0.0) for pid, v in self.last.items())


# ------------------------------------------------------------------ ours
def ours_plan(a, cfg):
    from data_juicer.lineage import Call, GroupFailure, Program

    fixed, per = cfg["fixed_s"], cfg["per_item_s"]

    def child(items):
        return child_compute(items, fixed, per, GroupFailure)

    p = Program("lineage-bench")
    p.domain("parent")
    p.domain("child", parent="parent")
    kids = p.call(Call("expand", expand_specs, batch_size=a.batch_size, num_cpus=0.25), p.input("spec"))
    c = p.expand(kids, "child")
    v = p.call(Call("child", child, batch_size=a.batch_size, replicas=a.replicas, num_cpus=a.child_cpus,
                    policy=a.policy), c, out="child")
    out = p.call(Call("combine", combine, batch_size=a.batch_size, num_cpus=0.25), p.reduce(v, "parent"), out="combine")
    p.output("out", out)
    return p.compile()


def run_ours(a, cfg, specs, engine: str) -> Sys:
    from data_juicer.lineage import run_local

    plan = ours_plan(a, cfg)
    roots = [{"spec": s} for s in specs]
    meter, t0 = CpuMeter(), time.time()
    if engine == "ray":
        from data_juicer.lineage.ray_executor import run_ray

        res = run_ray(plan, roots, input_batch_size=a.input_batch_size, max_active_input_batches=4,
                      slots_per_replica=a.slots)
    else:
        res = run_local(plan, roots)
    t1 = time.time()
    vals = res.values("out")
    outputs = [None if v is None else v[0] for v in vals]
    stamps = [v[1] for v in vals if v is not None]
    cc = res.counters["child"]
    return Sys("ours" if engine == "ray" else "ours (local)", t1 - t0, meter.done(),
               cc.mean_fill(a.batch_size), min(stamps) - t0 if stamps else None, outputs, cc.items,
               never_dispatched=cc.never_dispatched, batches=cc.batches)


# ------------------------------------------------------------------ Ray Data
class _RDChild:
    def __init__(self, fixed_s, per_item_s):
        self.fixed_s, self.per_item_s = fixed_s, per_item_s

    def __call__(self, batch):
        items = list(zip(batch["pid"].tolist(), batch["j"].tolist(), batch["poison"].tolist()))
        out = child_compute(items, self.fixed_s, self.per_item_s, lambda r: None)
        bid = uuid.uuid4().int & ((1 << 62) - 1)
        n = len(items)
        return {"pid": batch["pid"], "j": batch["j"],
                "value": np.array([-1 if o is None else o for o in out], dtype=np.int64),
                "failed": np.array([o is None for o in out]), "bid": np.full(n, bid, dtype=np.int64)}


def _rd_combine(g):
    order = np.argsort(g["j"], kind="stable")
    failed = bool(g["failed"].any())
    return {"pid": g["pid"][:1], "values": np.array([json.dumps([int(x) for x in g["value"][order]])]),
            "failed": np.array([failed]), "n": np.array([len(order)]), "stamp": np.array([time.time()]),
            "batches": np.array([json.dumps(sorted({int(b) for b in g["bid"]}))])}


def run_raydata(a, cfg, specs) -> Sys:
    import ray

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    import logging

    logging.getLogger("ray.data").setLevel(logging.WARNING)
    meter, t0 = CpuMeter(), time.time()
    ds = ray.data.from_items(specs)
    ds = ds.flat_map(lambda s: [{"pid": s["pid"], "j": j, "poison": s["poison"]} for j in range(s["n"])],
                     num_cpus=0.25)
    ds = ds.map_batches(_RDChild, fn_constructor_args=(cfg["fixed_s"], cfg["per_item_s"]), batch_size=a.batch_size,
                        batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=a.replicas),
                        num_cpus=a.child_cpus)
    ds = ds.groupby("pid", num_partitions=a.rd_partitions).map_groups(_rd_combine, batch_format="numpy", num_cpus=0.25)
    rows = ds.take_all()
    t1 = time.time()
    outputs: list = [None] * len(specs)
    batches, items, first = set(), 0, None
    for r in rows:
        batches.update(json.loads(r["batches"]))
        items += int(r["n"])
        first = r["stamp"] if first is None else min(first, r["stamp"])
        if not r["failed"]:  # the closest equivalent of a group failure: the whole parent is lost
            outputs[int(r["pid"])] = json.loads(r["values"])
    # batches counted per group: a batch spanning k parents is one id, so this is exact
    return Sys("Ray Data", t1 - t0, meter.done(), items / (len(batches) * a.batch_size), first - t0, outputs,
               items, never_dispatched=0, batches=len(batches))


# ------------------------------------------------------------------ rayorch
def run_rayorch(a, cfg, specs) -> Sys:
    import rayorch as ro

    fixed, per = cfg["fixed_s"], cfg["per_item_s"]

    class Expand:
        def run(self, specs):
            return expand_specs(specs)

    class Child:
        def run(self, items):
            return child_compute(items, fixed, per, ro.GroupFailure)

    class Combine:
        def run(self, groups):
            return combine(groups)

    class Bench(ro.Pipeline):
        def __init__(self):
            self.expand = ro.RayModule(Expand).ray_options(replicas=1, batch_size=a.batch_size, num_cpus=0.25)
            self.child = ro.RayModule(Child).ray_options(replicas=a.replicas, batch_size=a.batch_size,
                                                         num_cpus=a.child_cpus)
            self.combine = ro.RayModule(Combine).ray_options(replicas=1, batch_size=a.batch_size, num_cpus=0.25)

        def forward(self, specs):
            return self.combine(ro.F.reduce(self.child(ro.F.expand(self.expand(specs)))))

    meter, t0 = CpuMeter(), time.time()  # actor start-up included, as for the others
    with ro.Executor(Bench()) as ex:
        res = ex.run(specs, input_batch_size=a.input_batch_size, max_active_input_batches=4)
    t1 = time.time()
    outputs, stamps = [], []
    for v in res.outputs:
        if isinstance(v, ro.OutputIssue):
            outputs.append(None)
        else:
            outputs.append(list(v[0]))
            stamps.append(v[1])
    child = next(m for m in res.calls if m.udf_name.endswith("Child"))
    sizes = child.batch_sizes
    return Sys("rayorch 0.1.1", t1 - t0, meter.done(), sum(sizes) / (len(sizes) * a.batch_size),
               min(stamps) - t0 if stamps else None, outputs, child.grain_dispatches,
               never_dispatched=None, batches=len(sizes))


# ------------------------------------------------------------------ main
RUNNERS = {"ours": lambda a, c, s: run_ours(a, c, s, "ray"), "local": lambda a, c, s: run_ours(a, c, s, "local"),
           "raydata": run_raydata, "rayorch": run_rayorch}


def fmt(x, spec):
    return "n/a" if x is None else format(x, spec)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parents", type=int, default=200)
    ap.add_argument("--max-children", type=int, default=400)
    ap.add_argument("--zipf", type=float, default=1.2, help="exponent s of P(k) ~ k^-s")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-size", type=int, default=32, help="child batch size (every system)")
    ap.add_argument("--fixed-ms", type=float, default=20.0, help="child function: fixed cost per call")
    ap.add_argument("--per-item-ms", type=float, default=0.5, help="child function: cost per item")
    ap.add_argument("--replicas", type=int, default=2, help="child function actors (every Ray system)")
    ap.add_argument("--child-cpus", type=float, default=0.5, help="CPUs per child actor")
    ap.add_argument("--policy", default="any", choices=["any", "single"], help="our batching policy")
    ap.add_argument("--input-batch-size", type=int, default=256, help="ours and rayorch: roots admitted together")
    ap.add_argument("--rd-partitions", type=int, default=None,
                    help="Ray Data groupby partitions (default: 2 x --num-cpus; 0: Ray's own default, 200)")
    ap.add_argument("--slots", type=int, default=2, help="ours: batches queued per actor (slots_per_replica)")
    ap.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray")
    ap.add_argument("--poison", type=int, default=5, help="failure run: poison child 0 of the N largest parents")
    ap.add_argument("--systems", default="ours,local,raydata,rayorch")
    ap.add_argument("--failure-systems", default="ours,rayorch,raydata")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    if a.rd_partitions is None:
        a.rd_partitions = 2 * a.num_cpus
    a.rd_partitions = a.rd_partitions or None

    counts = make_workload(a.parents, a.max_children, a.zipf, a.seed)
    cfg = {"fixed_s": a.fixed_ms / 1000, "per_item_s": a.per_item_ms / 1000}
    clean = [{"pid": i, "n": n, "poison": False} for i, n in enumerate(counts)]
    largest = sorted(range(len(counts)), key=lambda i: (-counts[i], i))[:a.poison]
    poisoned = [dict(s, poison=s["pid"] in largest) for s in clean]
    total = sum(counts)
    print(f"workload: {a.parents} parents, {total} children (min {min(counts)}, median {int(np.median(counts))}, "
          f"max {max(counts)}), batch {a.batch_size}, child cost {a.fixed_ms:g} ms + {a.per_item_ms:g} ms/item, "
          f"{a.replicas} child replicas x {a.child_cpus:g} CPU; ideal child time "
          f"{(-(-total // a.batch_size) * cfg['fixed_s'] + total * cfg['per_item_s']) / a.replicas:.1f} s",
          flush=True)

    import ray

    t = time.time()
    ray.init(address="local", num_cpus=a.num_cpus, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    print(f"ray.init: {time.time() - t:.1f} s", flush=True)

    systems = [s for s in a.systems.split(",") if s]
    results, fails, notes = {}, {}, {}
    def settle():
        """Wait until the previous run's killed actors have given their CPUs back (ray.kill is async)."""
        end = time.time() + 30
        while ray.available_resources().get("CPU", 0) < a.num_cpus and time.time() < end:
            time.sleep(0.2)

    for s in systems:
        settle()
        try:
            results[s] = RUNNERS[s](a, cfg, clean)
            print(f"  clean {results[s].name}: {results[s].wall:.1f} s", flush=True)
        except Exception as e:  # noqa: BLE001 - report it and go on: the others still run
            notes[s] = f"{type(e).__name__}: {e}"
            print(f"  {s} failed: {notes[s]}", flush=True)
    ref = next(iter(results.values())).outputs if results else None
    for s, r in results.items():
        assert r.outputs == ref, f"{r.name}: clean outputs differ from {next(iter(results.values())).name}"
    expected = [[child_value(i, j) for j in range(n)] for i, n in enumerate(counts)]
    assert ref == expected, "clean outputs are not the expected child values"

    for s in [s for s in a.failure_systems.split(",") if s in results]:
        settle()
        fails[s] = RUNNERS[s](a, cfg, poisoned)
        print(f"  failure {fails[s].name}: {fails[s].wall:.1f} s", flush=True)
    ray.shutdown()

    print(f"\nclean run ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; wall and first parent from the "
          f"system's entry call, actor start-up included)")
    print("| system | wall s | CPU s | child batches | mean fill | first parent s |")
    print("|---|---|---|---|---|---|")
    for r in results.values():
        print(f"| {r.name} | {r.wall:.2f} | {r.cpu:.1f} | {r.batches} | {r.fill:.3f} | {fmt(r.first, '.2f')} |")
    for s, n in notes.items():
        print(f"| {s} | failed: {n} | | | | |")

    if fails:
        healthy = [i for i in range(len(counts)) if i not in largest]
        healthy_children = sum(counts[i] for i in healthy)
        print(f"\nfailure run: child 0 of the {a.poison} largest parents {[counts[i] for i in largest]} poisoned "
              f"({sum(counts[i] for i in largest) - a.poison} siblings)")
        print("| system | wall s | vs clean | siblings never dispatched | non-trigger calls | healthy parents equal |")
        print("|---|---|---|---|---|---|")
        for s, f in fails.items():
            base = results[s]
            equal = all(f.outputs[i] == base.outputs[i] for i in healthy)
            assert equal, f"{f.name}: a healthy parent's output differs from the clean run"
            non_trigger = f.child_calls - healthy_children - a.poison
            never = f.never_dispatched if f.never_dispatched is not None else total - f.child_calls
            print(f"| {f.name} | {f.wall:.2f} | {f.wall / base.wall:.2f}x | {never} | {non_trigger} | "
                  f"{len(healthy)}/{len(healthy)} |")
    if a.json:
        Path(a.json).write_text(json.dumps({
            "args": vars(a), "counts": counts, "notes": notes,
            "clean": {s: {k: v for k, v in vars(r).items() if k != "outputs"} for s, r in results.items()},
            "failure": {s: {k: v for k, v in vars(r).items() if k != "outputs"} for s, r in fails.items()}},
            indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
