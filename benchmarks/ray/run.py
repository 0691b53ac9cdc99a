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

import benchlib as bl  # noqa: E402
from make_corpus import DEFAULT_OUT, corpus_path, make_corpus  # noqa: E402

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
                    last[p.pid] = t.user + t.system + t.children_user + t.children_system
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


def same_output(a: str, b: str) -> bool:
    pa, pb = WORK / a, WORK / b
    names = sorted(f for f in os.listdir(pa) if f.endswith(".jsonl"))
    return names == sorted(f for f in os.listdir(pb) if f.endswith(".jsonl")) and all(
        filecmp.cmp(pa / n, pb / n, shallow=False) for n in names)


MEMORY_RECIPE = {"project_name": "ray-memory", "executor_type": "ray", "np": 2,
                 "process": [{"whitespace_normalization_mapper": None}, {"clean_email_mapper": None},
                             {"text_length_filter": {"min_len": 20}}, {"words_num_filter": {"min_num": 4}},
                             {"special_characters_filter": {"max_ratio": 0.5}}]}


def short_docs(path: Path, n: int) -> Path:
    """``n`` short documents (about 120 bytes each), deterministic."""
    if path.exists():
        return path
    words = ("data juicer ray block driver memory stream write export filter mapper sample text the of and a "
             "to in is it that for on").split()
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            body = " ".join(words[(i * 7 + j * 3) % len(words)] for j in range(8 + i % 17))
            f.write(json.dumps({"id": i, "text": f"Document {i}: {body}. Contact a{i}@x.org"}) + "\n")
    return path


def memory_runs(base_docs: int, factors: list[int], timeout: float, env: dict) -> list[dict]:
    """The driver's peak RSS on Ray for corpora of base_docs x each factor (same recipe)."""
    out = []
    for k in factors:
        corpus = short_docs(WORK / f"short_{base_docs * k}.jsonl", base_docs * k)
        for kind in ("ray", "default"):
            extra = {"executor_type": kind, "override_num_blocks": max(8, 2 * k)} if kind == "ray" else \
                {"executor_type": kind}
            r = run_one(f"mem_{kind}_{k}x", MEMORY_RECIPE, corpus, extra, timeout, env)
            r.update(factor=k, docs=base_docs * k, corpus_mb=round(corpus.stat().st_size / 2**20, 1), kind=kind)
            out.append(r)
        r["equal"] = same_output(f"mem_ray_{k}x", f"mem_default_{k}x")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--np", type=int, default=2, help="np of the default executor")
    ap.add_argument("--scaling", action="store_true", help="also run 1 node x 1 CPU, 2 nodes x 1 CPU, 1 node x 2")
    ap.add_argument("--skip-compare", action="store_true", help="only the scaling table")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--memory", type=int, default=0, metavar="N",
                    help="only the driver-memory runs: N short documents at 1x, then 10x (Ray and default)")
    a = ap.parse_args(argv)
    if a.memory:
        env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONUNBUFFERED="1")
        env.pop("RAY_ADDRESS", None)
        WORK.mkdir(exist_ok=True)
        res = memory_runs(a.memory, [1, 10], a.timeout, env)
        print(bl.fmt_table(["run", "docs", "corpus MB", "rc", "wall s", "driver peak MB", "docs/s (wall)"],
                           [[r["name"], r["docs"], r["corpus_mb"], r["rc"], r["wall_s"], r["driver_peak_mb"],
                             round(r["docs"] / r["wall_s"], 1)] for r in res]))
        print("outputs equal (ray vs default):", [(r["factor"], r.get("equal")) for r in res if "equal" in r])
        (WORK / "memory_report.json").write_text(json.dumps(res, indent=2))
        return 0 if all(r["rc"] == 0 for r in res) else 1

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
    if a.scaling:
        from ray.cluster_utils import Cluster

        for label, nodes in (("ray_1node_1cpu", [1]), ("ray_2nodes_1cpu_each", [1, 1]), ("ray_1node_2cpu", [2])):
            cluster = Cluster(initialize_head=True, connect=False,
                              head_node_args={"num_cpus": nodes[0], "include_dashboard": False})
            try:
                for n in nodes[1:]:
                    cluster.add_node(num_cpus=n)
                cluster.wait_for_nodes()
                results.append(run_one(label, recipe, corpus, {"np": a.np, "executor_type": "ray",
                                                               "ray_address": cluster.address}, a.timeout, env))
            finally:
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
    if not a.skip_compare and len(results) >= 2 and results[0]["wall_s"] and results[1]["wall_s"]:
        ratio = results[0]["wall_s"] / results[1]["wall_s"]
        exec_ratio = (results[0]["executor_s"] or 0) / max(results[1]["executor_s"] or 1e-9, 1e-9)
        print(f"Ray throughput = {ratio:.0%} of the default executor's (wall); executor time only: {exec_ratio:.0%}")
    report = {"num_docs": a.num_docs, "cpus": os.cpu_count(), "runs": results}
    (WORK / "report.json").write_text(json.dumps(report, indent=2))
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
