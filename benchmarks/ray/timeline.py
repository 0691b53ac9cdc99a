#!/usr/bin/env python
"""Where a job's wall time and CPU go: one ``dj-process`` run sampled every 0.1 s (psutil), by phase
(from the job log, as its lines appear) and by process kind (the driver, its forked workers, Ray's
GCS, raylet, dashboard, agents, monitors and workers).

  python benchmarks/ray/timeline.py                     # default (np=2) and Ray (the job starts Ray), 50k docs
  python benchmarks/ray/timeline.py --kinds ray         # one run
  python benchmarks/ray/timeline.py --kinds ray,connect # + the job joining a running local 2-CPU cluster

Each run's table: for every phase (interpreter start to the first log line, Ray start, the load,
each pass, the dedups, the export, the exit), its wall seconds and the CPU seconds of each process
kind in it. Same corpus and recipe as ``run.py``; the runs go to ``benchmarks/ray/work/tl_<kind>/``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "text_pipeline"))

import benchlib as bl
from make_corpus import DEFAULT_OUT, corpus_path, make_corpus

WORK = HERE / "work"


def kind_of(p: psutil.Process, driver: int) -> str:
    if p.pid == driver:
        return "driver"
    try:
        name = p.name()
        cmd = " ".join(p.cmdline())
    except psutil.Error:
        return "?"
    if "gcs_server" in name or "gcs_server" in cmd:
        return "gcs"
    if name == "raylet" or cmd.split(" ")[0].endswith("/raylet"):
        return "raylet"
    if "runtime_env/agent" in cmd or "runtime_env_agent" in cmd:
        return "rt_env_agent"
    if "dashboard/agent.py" in cmd:
        return "dash_agent"
    if "dashboard.py" in cmd or "dashboard/dashboard" in cmd:
        return "dashboard"
    if "log_monitor" in cmd:
        return "log_monitor"
    if "monitor.py" in cmd:
        return "monitor"
    if cmd.startswith("ray::") or "default_worker.py" in cmd or name.startswith("ray::"):
        return "ray_worker"
    try:
        if p.ppid() == driver:
            return "forked_worker"
    except psutil.Error:
        pass
    return "other"


PHASES = (  # (log text that opens a phase, its name); the first match of each, in order of appearance
    ("starting a local Ray", "ray.init"),
    ("connecting to the Ray", "ray connect"),
    ("Ray: ", "load"),
    ("samples on Ray", "row pass"),
    ("samples; job folder", "row pass"),
    ("[document_deduplicator]", "minhash"),
    ("[document_minhash_deduplicator]", "simhash"),
    ("[document_simhash_deduplicator]", "export"),
    ("exported ", "exit"),
)


def sample_run(argv, log_path: Path, env: dict, timeout: float, dt: float = 0.1) -> dict:
    me = psutil.Process()
    base = {}
    for p in me.children(recursive=True):
        try:
            t = p.cpu_times()
            base[p.pid] = t.user + t.system
        except psutil.Error:
            pass
    last: dict[int, float] = dict(base)
    kinds: dict[int, str] = {}
    per_phase: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    marks = [(0.0, "start to first log line")]
    seen = set()
    with open(log_path, "w", encoding="utf-8") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=log_path.parent)
        reader = open(log_path, encoding="utf-8", errors="replace")
        buf = ""
        while True:
            done = proc.poll() is not None
            now = time.perf_counter() - t0
            buf += reader.read()
            *lines, buf = buf.split("\n")
            for line in lines:
                if len(marks) == 1 and "|" in line:
                    marks.append((now, "first log line to next"))
                for key, name in PHASES:
                    if key in line and key not in seen:
                        seen.add(key)
                        marks.append((now, name))
            phase = marks[-1][1]
            for p in me.children(recursive=True):
                try:
                    t = p.cpu_times()
                except psutil.Error:
                    continue
                c = t.user + t.system
                if p.pid not in kinds:
                    kinds[p.pid] = kind_of(p, proc.pid)
                d = c - last.get(p.pid, 0.0)
                if d > 0:
                    per_phase[phase][kinds[p.pid]] += d
                last[p.pid] = c
            if done:
                break
            if now > timeout:
                proc.kill()
            time.sleep(dt)
        wall = time.perf_counter() - t0
    marks.append((wall, "end"))
    rows = []
    for (a, name), (b, _) in zip(marks, marks[1:]):
        rows.append({"phase": name, "start_s": round(a, 2), "wall_s": round(b - a, 2),
                     "cpu": {k: round(v, 2) for k, v in sorted(per_phase[name].items())}})
    return {"rc": proc.returncode, "wall_s": round(wall, 2), "phases": rows}


def print_run(name: str, res: dict) -> None:
    kinds = sorted({k for r in res["phases"] for k in r["cpu"]})
    head = ["phase", "at s", "wall s", "CPU s"] + kinds
    rows = [[r["phase"], r["start_s"], r["wall_s"], round(sum(r["cpu"].values()), 1)]
            + [r["cpu"].get(k, "") for k in kinds] for r in res["phases"]]
    tot = defaultdict(float)
    for r in res["phases"]:
        for k, v in r["cpu"].items():
            tot[k] += v
    rows.append(["total", "", res["wall_s"], round(sum(tot.values()), 1)] + [round(tot[k], 1) for k in kinds])
    print(f"== {name} (rc {res['rc']})")
    print(bl.fmt_table(head, rows))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--kinds", default="default,ray")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--extra", default="{}", help="JSON merged into the Ray runs' recipes")
    a = ap.parse_args(argv)
    corpus = corpus_path(DEFAULT_OUT, a.num_docs, a.seed)
    if not corpus.exists():
        corpus = make_corpus(a.num_docs, a.seed)
    base = bl.load_yaml(HERE.parent / "text_pipeline" / "recipe.yaml")
    recipe, _ = bl.filter_recipe(base, bl.list_our_ops())
    env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONUNBUFFERED="1")
    env.pop("RAY_ADDRESS", None)
    report = []
    for rnd in range(a.rounds):
        for kind in a.kinds.split(","):
            out = WORK / f"tl_{kind}"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            extra = {"np": 2}
            cluster = None
            if kind != "default":
                extra.update(executor_type="ray", **json.loads(a.extra))
            if kind == "connect":
                from ray.cluster_utils import Cluster

                cluster = Cluster(initialize_head=True, connect=False,
                                  head_node_args={"num_cpus": os.cpu_count(), "include_dashboard": False})
                cluster.wait_for_nodes()
                time.sleep(5)
                extra["ray_address"] = cluster.address
            r = dict(recipe, dataset_path=str(corpus), export_path=str(out / "result.jsonl"),
                     ds_cache_dir=str(out / "hf_cache"), **extra)
            bl.dump_yaml(r, out / "recipe.yaml")
            try:
                res = sample_run(bl.ours_cmd() + ["--config", str(out / "recipe.yaml")], out / "run.log", env,
                                 a.timeout)
            finally:
                if cluster is not None:
                    cluster.shutdown()
            res["name"] = kind
            res["round"] = rnd
            print_run(f"{kind} round {rnd}", res)
            report.append(res)
    names = {r["name"] for r in report}
    if "default" in names:
        import filecmp

        for kind in names - {"default"}:
            a, b = WORK / "tl_default", WORK / f"tl_{kind}"
            files = sorted(f for f in os.listdir(a) if f.endswith(".jsonl"))
            same = files == sorted(f for f in os.listdir(b) if f.endswith(".jsonl")) and all(
                filecmp.cmp(a / f, b / f, shallow=False) for f in files)
            print(f"{kind}: output {'byte-identical to' if same else 'DIFFERENT from'} the default executor's")
    (WORK / "timeline.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
