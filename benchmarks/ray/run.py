#!/usr/bin/env python
"""Ray executor benchmark: the text pipeline on Ray vs the default executor, and 1 node vs 2 local nodes.

  python benchmarks/ray/run.py                    # default (np=2) vs Ray (local, all CPUs), 50,000 documents
  python benchmarks/ray/run.py --scaling          # + 1 node x 1 CPU, 2 local nodes x 1 CPU, 1 node x 2 CPUs
  python benchmarks/ray/run.py --num_docs 10000   # a smaller corpus

Uses the corpus and recipe of ``benchmarks/text_pipeline`` (ops missing from our registry are dropped).
Every run is a ``dj-process --config`` subprocess on a fresh output folder. Reported per run: wall time,
documents/s, the executor's own time (``summary.json`` seconds, which excludes interpreter start-up),
Ray start-up time (from the log), and CPU seconds (user+sys) summed over every process of the run (the
driver, its workers, and the Ray daemons and workers; sampled per process every 0.2 s, so it is a slight
undercount). Each Ray result is compared byte for byte with the default executor's.
Results go to ``benchmarks/ray/work/report.json``.
"""
from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "text_pipeline"))

import benchlib as bl
from make_corpus import DEFAULT_OUT, corpus_path, make_corpus

WORK = HERE / "work"


def run_sampled(argv: list[str], log_path: Path, env: dict, timeout: float) -> dict:
    """Run ``argv``; wall time and CPU seconds of every descendant of this script that is new or busy."""
    me = psutil.Process()
    base: dict[int, float] = {}
    for p in me.children(recursive=True):  # e.g. an already started Ray cluster: count only what it does now
        try:
            t = p.cpu_times()
            base[p.pid] = t.user + t.system
        except psutil.Error:
            pass
    last: dict[int, float] = {}
    peak_rss = 0
    with open(log_path, "w", encoding="utf-8") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=log_path.parent)
        driver = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:  # the driver alone (dj-process): its resident memory, sampled with the CPU times
                peak_rss = max(peak_rss, driver.memory_info().rss)
            except psutil.Error:
                pass
            for p in me.children(recursive=True):
                try:
                    t = p.cpu_times()
                    # own times only: every descendant is sampled itself (adding children_* counted the
                    # forked workers twice, once in themselves and once in the driver that reaped them)
                    last[p.pid] = t.user + t.system
                except psutil.Error:
                    pass
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                break
            time.sleep(0.2)
        rc = proc.wait()
        wall = time.perf_counter() - t0
    cpu = sum(v - base.get(pid, 0.0) for pid, v in last.items())
    return {"rc": rc, "wall_s": round(wall, 2), "cpu_s": round(cpu, 1), "driver_peak_mb": round(peak_rss / 2**20, 1),
            "log": str(log_path)}


def summary_of(out_dir: Path) -> dict:
    for d in out_dir.iterdir():
        if d.is_dir() and (d / "summary.json").exists():
            return json.loads((d / "summary.json").read_text())
    return {}


def ray_startup_s(log: str) -> float | None:
    """Seconds from 'starting a local Ray instance'/'connecting' to the first 'samples on Ray' line."""
    times = {}
    for line in Path(log).read_text(errors="replace").splitlines():
        m = re.match(r"(\d\d):(\d\d):(\d\d) \|", line)
        if not m:
            continue
        t = int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3])
        if ("starting a local Ray" in line or "connecting to the Ray" in line) and "start" not in times:
            times["start"] = t
        if "samples on Ray" in line and "ready" not in times:
            times["ready"] = t
    return times["ready"] - times["start"] if len(times) == 2 else None


def run_one(name: str, recipe: dict, corpus: Path, extra: dict, timeout: float, env: dict) -> dict:
    out = WORK / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    # a fresh datasets cache: the default executor must not reuse passes cached by an earlier run
    r = dict(recipe, dataset_path=str(corpus), export_path=str(out / "result.jsonl"),
             ds_cache_dir=str(out / "hf_cache"), **extra)
    bl.dump_yaml(r, out / "recipe.yaml")
    print(f"[run] {name} ...", flush=True)
    res = run_sampled(bl.ours_cmd() + ["--config", str(out / "recipe.yaml")], out / "run.log", env, timeout)
    s = summary_of(out)
    res.update(name=name, rows_in=s.get("rows_in"), rows_out=s.get("rows_out"), executor_s=s.get("seconds"),
               ray_startup_s=ray_startup_s(res["log"]) if extra.get("executor_type") == "ray" else None)
    if res["rc"] != 0:
        print(bl.log_tail(res["log"], 30), file=sys.stderr)
    print(f"[run] {name}: rc={res['rc']} wall={res['wall_s']}s cpu={res['cpu_s']}s rows_out={res['rows_out']}",
          flush=True)
    return res


def pin_nodes(cluster, nodes: list) -> set | None:
    """``--pin-nodes``: confine each local node of ``cluster`` to cores of its own, as if it were a machine
    with ``nodes[i]`` CPUs: its raylet, agents and worker processes (and the workers the raylet starts
    later, which inherit the raylet's affinity) to the next ``nodes[i]`` cores, the head node from core 0.
    The harness (and so the job's driver, which it starts) goes to the head node's cores. Without this a
    "1 CPU" Ray node still runs on every core of the machine: Ray's ``num_cpus`` only counts tasks, and a
    task's threads (Arrow, the MinHash hashing threads) use the other core too. Returns the harness's
    old affinity (to restore), or None when the layout asks for every core (nothing to pin)."""
    import psutil

    cores = sorted(os.sched_getaffinity(0))
    if sum(nodes) >= len(cores) and len(nodes) == 1:
        return None
    if sum(nodes) > len(cores):
        raise SystemExit(f"--pin-nodes: the layout {nodes} needs {sum(nodes)} cores, this machine has {len(cores)}")
    head = cluster.head_node
    order = [head] + [n for n in cluster.list_all_nodes() if n is not head]
    start = 0
    for node, n in zip(order, nodes):
        mine = set(cores[start:start + n])
        start += n
        for _kind, popen in node.live_processes():
            try:
                proc = psutil.Process(popen.pid)
                for q in [proc] + proc.children(recursive=True):
                    q.cpu_affinity(sorted(mine))
            except psutil.NoSuchProcess:
                continue
    old = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(cores[:nodes[0]]))
    return old


def same_output(a: str, b: str) -> bool:
    pa, pb = WORK / a, WORK / b
    names = sorted(f for f in os.listdir(pa) if f.endswith(".jsonl"))
    return names == sorted(f for f in os.listdir(pb) if f.endswith(".jsonl")) and all(
        filecmp.cmp(pa / n, pb / n, shallow=False) for n in names)


MEMORY_RECIPE = {"project_name": "ray-memory", "np": 2,
                 "process": [{"whitespace_normalization_mapper": None}, {"clean_email_mapper": None},
                             {"text_length_filter": {"min_len": 20}},
                             {"special_characters_filter": {"max_ratio": 0.5}}]}

_WORDS = (["data", "juicer", "ray", "block", "driver", "memory", "stream", "write", "export", "filter", "mapper", "sample", "text", "the", "of", "and", "a", "to", "in", "is", "it", "that", "for", "on", "with", "as", "by", "from", "this", "we", "can", "be", "are", "was", "not", "or"])


def sized_corpus(path: Path, target_mb: float, doc_bytes: int = 2000, seed: int = 7) -> Path:
    """A deterministic JSON Lines corpus of about ``target_mb`` MB: documents of about ``doc_bytes``
    bytes (512 distinct bodies of 0.2x-1.8x that size, each with its own id, number and e-mail),
    every 13th one too short for ``text_length_filter`` and every 17th mostly special characters
    (dropped by ``special_characters_filter``). Written once, then reused."""
    import random

    if path.exists() and path.stat().st_size >= target_mb * 2**20:
        return path
    rng = random.Random(seed)
    bodies = []
    for _ in range(512):
        n = max(8, int(doc_bytes * rng.uniform(0.2, 1.8) / 6))
        bodies.append(" ".join(rng.choice(_WORDS) for _ in range(n)))
    limit = int(target_mb * 2**20)
    tmp = path.with_suffix(".tmp")
    written, i = 0, 0
    with open(tmp, "w", encoding="utf-8") as f:
        while written < limit:
            if i % 13 == 5:
                text = f"tiny {i}"
            elif i % 17 == 3:
                text = f"{i} " + "#$%&*@!" * 40
            else:
                text = f"Document {i}:  {bodies[(i * 7919) % 512]}.  Contact a{i}@x.org\u3000for more."
            line = json.dumps({"id": i, "text": text}, ensure_ascii=False) + "\n"
            f.write(line)
            written += len(line.encode("utf-8"))
            i += 1
    os.replace(tmp, path)
    return path


def sha256_of(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(8 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def output_hashes(folder: Path) -> dict:
    """sha256 of every exported .jsonl (result and _stats.jsonl) of a run folder."""
    return {n: sha256_of(folder / n) for n in sorted(os.listdir(folder)) if n.endswith(".jsonl")}


def _rss_parts(pid: int) -> tuple[int, int]:
    """(RssAnon, RssFile + RssShmem) of a process, in bytes."""
    anon = other = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    anon = int(line.split()[1]) * 1024
                elif line.startswith(("RssFile:", "RssShmem:")):
                    other += int(line.split()[1]) * 1024
    except OSError:
        pass
    return anon, other


def run_limited(argv: list[str], log_path: Path, env: dict, timeout: float, limit_mb: float | None,
                limit_on: str = "anon") -> dict:
    """Run the driver ``argv`` under a memory limit: its memory is sampled every 0.1 s and the driver
    is killed (the run fails, ``limit_exceeded``) as soon as it is above ``limit_mb``. ``limit_on``:
    ``anon`` (RssAnon: what the process allocated, its heap; not the ~100 MB of file-backed pages of
    the shared libraries it maps) or ``rss`` (all resident pages). The limit is on the driver process
    alone; Ray's workers and object store are other processes."""
    peak = peak_anon = 0
    exceeded = False
    with open(log_path, "w", encoding="utf-8") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=log_path.parent)
        driver = psutil.Process(proc.pid)
        cpu = 0.0
        while proc.poll() is None:
            try:
                rss = driver.memory_info().rss
                t = driver.cpu_times()
                cpu = t.user + t.system
            except psutil.Error:
                rss = 0
            anon, _ = _rss_parts(proc.pid)
            peak, peak_anon = max(peak, rss), max(peak_anon, anon)
            if limit_mb and (anon if limit_on == "anon" else rss) > limit_mb * 2**20:
                exceeded = True
                proc.kill()
                break
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                break
            time.sleep(0.1)
        rc = proc.wait()
        wall = time.perf_counter() - t0
    return {"rc": rc, "wall_s": round(wall, 2), "driver_cpu_s": round(cpu, 1), "driver_peak_mb": round(peak / 2**20, 1),
            "driver_peak_anon_mb": round(peak_anon / 2**20, 1), "limit_exceeded": exceeded, "log": str(log_path)}


def memory_runs(limit_mb: float, factors: list[float], timeout: float, env: dict, doc_bytes: int,
                object_store_mb: int, keep: bool, limit_on: str = "anon", kinds=("ray", "default")) -> list[dict]:
    """The Ray driver under a ``limit_mb`` memory limit on corpora of ``limit_mb`` x each factor MB
    (so the largest is ``max(factors)`` times the limit), each compared with the default executor."""
    from ray.cluster_utils import Cluster

    out = []
    for attempt in range(3):  # on a loaded machine the raylet may miss Ray's fixed 30 s start-up wait
        try:
            cluster = Cluster(initialize_head=True, connect=False,
                              head_node_args={"num_cpus": 2, "include_dashboard": False,
                                              "object_store_memory": object_store_mb * 2**20})
            break
        except Exception as e:
            if attempt == 2:
                raise
            print(f"[memory] the Ray cluster did not start ({e}); again", flush=True)
    try:
        cluster.wait_for_nodes()
        for k in factors:
            corpus = sized_corpus(WORK / f"corpus_{int(limit_mb * k)}mb.jsonl", limit_mb * k, doc_bytes)
            hashes = {}
            for kind in kinds:
                name = f"mem_{kind}_{k:g}x"
                d = WORK / name
                if d.exists():
                    shutil.rmtree(d)
                d.mkdir(parents=True)
                extra = {"executor_type": kind}
                if kind == "ray":
                    extra["ray_address"] = cluster.address
                r = dict(MEMORY_RECIPE, dataset_path=str(corpus), export_path=str(d / "result.jsonl"),
                         ds_cache_dir=str(d / "hf_cache"), **extra)
                bl.dump_yaml(r, d / "recipe.yaml")
                print(f"[memory] {name}: {corpus.stat().st_size / 2**20:.0f} MB corpus, driver limit "
                      f"{limit_mb if kind == 'ray' else '-'} MB ...", flush=True)
                res = run_limited(bl.ours_cmd() + ["--config", str(d / "recipe.yaml")], d / "run.log", env, timeout,
                                  limit_mb if kind == "ray" else None, limit_on)
                s = summary_of(d)
                res.update(name=name, kind=kind, factor=k, corpus_mb=round(corpus.stat().st_size / 2**20, 1),
                           rows_in=s.get("rows_in"), rows_out=s.get("rows_out"), executor_s=s.get("seconds"),
                           errors=s.get("errors"))
                if res["rc"] != 0:
                    print(bl.log_tail(res["log"], 30), file=sys.stderr)
                hashes[kind] = output_hashes(d) if res["rc"] == 0 else {}
                res["outputs"] = hashes[kind]
                shutil.rmtree(d / "hf_cache", ignore_errors=True)
                print(f"[memory] {name}: rc={res['rc']} wall={res['wall_s']}s driver peak={res['driver_peak_mb']} MB "
                      f"(anon {res['driver_peak_anon_mb']}) rows_out={res['rows_out']}", flush=True)
                out.append(res)
            if len(hashes) < 2:  # one executor only: compare later (``output_hashes`` of both folders)
                continue
            eq = bool(hashes["ray"]) and hashes["ray"] == hashes["default"]
            for r in out[-2:]:
                r["equal"] = eq
            if not keep:  # the big outputs are compared; their hashes stay in the report
                for kind in ("ray", "default"):
                    for f in (WORK / f"mem_{kind}_{k:g}x").glob("*.jsonl"):
                        f.unlink()
    finally:
        cluster.shutdown()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--np", type=int, default=2, help="np of the default executor")
    ap.add_argument("--scaling", action="store_true", help="also run 1 node x 1 CPU, 2 nodes x 1 CPU, 1 node x 2")
    ap.add_argument("--skip-compare", action="store_true", help="only the scaling table")
    ap.add_argument("--layouts", default="1node_1cpu,2nodes_1cpu_each,1node_2cpu",
                    help="--scaling: the cluster layouts to run (e.g. '1node_1cpu,2nodes_1cpu_each' for the ratio alone)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--skip-connect", action="store_true",
                    help="no 'ray_connect' run (the job connecting to a running local cluster)")
    ap.add_argument("--pin-nodes", action="store_true",
                    help="--scaling: confine each local node (and the driver, on the head node) to cores of its own "
                         "(pin_nodes), so a 1-CPU node uses one core as a 1-CPU machine would")
    ap.add_argument("--settle", type=float, default=5.0,
                    help="seconds a freshly started cluster idles before its job connects (its workers start)")
    ap.add_argument("--memory", type=float, nargs="?", const=192.0, default=0, metavar="LIMIT_MB",
                    help="only the driver-memory runs: the Ray driver under a LIMIT_MB (default 192) memory "
                         "limit, on corpora of LIMIT_MB x 1 and x 10 MB, each against the default executor")
    ap.add_argument("--limit-on", choices=("anon", "rss"), default="anon",
                    help="--memory: what the limit is on: the driver's anonymous memory (default) or its whole RSS")
    ap.add_argument("--factors", default="1,10", help="--memory: corpus sizes, in multiples of the limit")
    ap.add_argument("--doc-bytes", type=int, default=2000, help="--memory: mean document size")
    ap.add_argument("--object-store-mb", type=int, default=1024,
                    help="--memory: the Ray object store (beyond it, Ray spills blocks to disk)")
    ap.add_argument("--keep", action="store_true", help="--memory: keep the exported files (else only their hashes)")
    ap.add_argument("--kinds", default="ray,default", help="--memory: the executors to run (one alone: no comparison)")
    ap.add_argument("--report", default="memory_report.json", help="--memory: report file name under work/")
    a = ap.parse_args(argv)
    if a.memory:
        env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONUNBUFFERED="1")
        env.pop("RAY_ADDRESS", None)
        WORK.mkdir(exist_ok=True)
        factors = [float(x) for x in a.factors.split(",")]
        res = memory_runs(a.memory, factors, a.timeout, env, a.doc_bytes, a.object_store_mb, a.keep, a.limit_on,
                          tuple(a.kinds.split(",")))
        print(bl.fmt_table(["run", "corpus MB", "docs in", "docs out", "rc", "wall s", "driver CPU s",
                            "driver peak MB", "driver anon MB", "limit MB", "= default"],
                           [[r["name"], r["corpus_mb"], r["rows_in"], r["rows_out"], r["rc"], r["wall_s"],
                             r["driver_cpu_s"], r["driver_peak_mb"], r["driver_peak_anon_mb"],
                             a.memory if r["kind"] == "ray" else "-", r.get("equal")] for r in res]))
        ray_runs = [r for r in res if r["kind"] == "ray" and r["rc"] == 0]
        if len(ray_runs) >= 2:
            lo, hi = ray_runs[0], ray_runs[-1]
            for key, what in (("driver_peak_mb", "RSS"), ("driver_peak_anon_mb", "anon")):
                growth = hi[key] / lo[key] - 1
                print(f"Ray driver peak {what} {lo[key]} MB at {lo['factor']:g}x -> {hi[key]} MB at "
                      f"{hi['factor']:g}x ({growth:+.1%})")
            print(f"largest corpus = {hi['corpus_mb'] / a.memory:.1f}x the {a.memory:g} MB limit (on {a.limit_on})")
        (WORK / a.report).write_text(json.dumps(
            {"limit_mb": a.memory, "limit_on": a.limit_on, "object_store_mb": a.object_store_mb, "doc_bytes": a.doc_bytes, "runs": res},
            indent=2))
        ok = all(r["rc"] == 0 and not r["limit_exceeded"] for r in res) and all(r.get("equal", True) for r in res)
        return 0 if ok else 1

    corpus = corpus_path(DEFAULT_OUT, a.num_docs, a.seed)
    if not corpus.exists():
        corpus = make_corpus(a.num_docs, a.seed)
    base = bl.load_yaml(HERE.parent / "text_pipeline" / "recipe.yaml")
    recipe, dropped = bl.filter_recipe(base, bl.list_our_ops())
    if dropped:
        print(f"[recipe] not in our registry, dropped: {', '.join(dropped)}")
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONUNBUFFERED="1")
    env.pop("RAY_ADDRESS", None)
    WORK.mkdir(exist_ok=True)
    results = []
    if not a.skip_compare:
        results.append(run_one("default", recipe, corpus, {"np": a.np}, a.timeout, env))
        results.append(run_one("ray_local", recipe, corpus, {"np": a.np, "executor_type": "ray"}, a.timeout, env))
        if not a.skip_connect:  # what users of a cluster see: the job connects to a running one (ray_address)
            from ray.cluster_utils import Cluster

            cluster = Cluster(initialize_head=True, connect=False,
                              head_node_args={"num_cpus": os.cpu_count(), "include_dashboard": False})
            try:
                cluster.wait_for_nodes()
                time.sleep(a.settle)  # a running cluster has its idle workers up: let the new one start them
                results.append(run_one("ray_connect", recipe, corpus, {"np": a.np, "executor_type": "ray",
                                                                       "ray_address": cluster.address}, a.timeout, env))
            finally:
                cluster.shutdown()
    if a.scaling:
        from ray.cluster_utils import Cluster

        layouts = {"1node_1cpu": [1], "2nodes_1cpu_each": [1, 1], "1node_2cpu": [2]}
        wanted = [x.strip() for x in a.layouts.split(",") if x.strip()]
        unknown = [x for x in wanted if x not in layouts]
        if unknown:
            ap.error(f"--layouts: unknown {', '.join(unknown)} (known: {', '.join(layouts)})")
        for label, nodes in ((f"ray_{x}", layouts[x]) for x in wanted):
            cluster = Cluster(initialize_head=True, connect=False,
                              head_node_args={"num_cpus": nodes[0], "include_dashboard": False})
            pinned = None
            try:
                for n in nodes[1:]:
                    cluster.add_node(num_cpus=n)
                cluster.wait_for_nodes()
                pinned = pin_nodes(cluster, nodes) if a.pin_nodes else None
                time.sleep(a.settle)
                results.append(run_one(label + ("_pinned" if pinned else ""), recipe, corpus,
                                       {"np": a.np, "executor_type": "ray", "ray_address": cluster.address},
                                       a.timeout, env))
            finally:
                if pinned:
                    os.sched_setaffinity(0, pinned)
                cluster.shutdown()
    ref = "default" if not a.skip_compare else None
    rows = []
    for r in results:
        docs = (r["rows_in"] or 0)
        eq = "" if ref is None or r["name"] == ref else ("yes" if same_output(r["name"], ref) else "NO")
        r["equal_to_default"] = eq
        r["docs_per_s"] = round(docs / r["wall_s"], 1) if r["wall_s"] else None
        rows.append([r["name"], r["rc"], r["wall_s"], r["executor_s"], r["ray_startup_s"] or "",
                     r["docs_per_s"], r["cpu_s"], r["rows_out"], eq])
    print(bl.fmt_table(["run", "rc", "wall s", "executor s", "ray start s", "docs/s (wall)", "CPU s", "docs out",
                        "equal to default"], rows))
    by = {r["name"]: r for r in results}
    if not a.skip_compare and by.get("default", {}).get("wall_s"):
        d = by["default"]
        for name, what in (("ray_local", "a local Ray started by the job"),
                           ("ray_connect", "the job connecting to a running local cluster")):
            r = by.get(name)
            if not r or r["rc"] != 0 or not r["wall_s"]:
                continue
            ratio = d["wall_s"] / r["wall_s"]
            exec_ratio = (d["executor_s"] or 0) / max(r["executor_s"] or 1e-9, 1e-9)
            cpu_ratio = (d["cpu_s"] or 0) / max(r["cpu_s"] or 1e-9, 1e-9)
            r["throughput_vs_default"] = round(ratio, 3)
            print(f"Ray throughput, {what}: {ratio:.0%} of the default executor's (wall; target >= 90%: "
                  f"{'met' if ratio >= 0.9 else 'MISSED'}); executor time only: {exec_ratio:.0%}; "
                  f"CPU s: default/ray = {cpu_ratio:.2f}")
    one = by.get("ray_1node_1cpu") or by.get("ray_1node_1cpu_pinned")
    two = by.get("ray_2nodes_1cpu_each") or by.get("ray_2nodes_1cpu_each_pinned")
    if one and two and one["rc"] == 0 and two["rc"] == 0:
        sc = one["wall_s"] / two["wall_s"]
        sc_exec = (one["executor_s"] or 0) / max(two["executor_s"] or 1e-9, 1e-9)
        print(f"2 local nodes x 1 CPU vs 1 node x 1 CPU: {sc:.2f}x (wall; target >= 1.7x: "
              f"{'met' if sc >= 1.7 else 'MISSED'}); executor time only: {sc_exec:.2f}x")
    report = {"num_docs": a.num_docs, "cpus": os.cpu_count(), "runs": results}
    (WORK / "report.json").write_text(json.dumps(report, indent=2))
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
