#!/usr/bin/env python
"""The adapter where it matters: the same recipe with the adapter off and on, side by side.

  python benchmarks/adapter/run.py                      # wrong_order.yaml on the 50,000-document corpus
  python benchmarks/adapter/run.py --num_docs 10000     # a smaller corpus (built by make_corpus.py)
  python benchmarks/adapter/run.py --recipe benchmarks/text_pipeline/recipe.yaml

Each run is ``dj-process --config`` as a subprocess (np workers) on a fresh output folder:
``off`` (``op_fusion: false``, ``adaptive_batch_size: false``) then ``on`` (``op_fusion: true``,
``fusion_strategy: probe``, ``adaptive_batch_size: true``), ``--rounds`` times alternately. Reported per
run: wall seconds, CPU seconds of the process tree (user+sys of every process, workers included, from
``RUSAGE_CHILDREN``: the figure that stays meaningful on a loaded machine), peak RSS of the tree, and for
``on`` the probe's own seconds (from its log line). The exports must be byte-identical (asserted).
Results: ``work/report.json``.
"""
from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "text_pipeline"))

import benchlib as bl  # noqa: E402
from make_corpus import make_corpus  # noqa: E402

SETTINGS = {
    "off": {"op_fusion": False, "adaptive_batch_size": False},
    "on": {"op_fusion": True, "fusion_strategy": "probe", "adaptive_batch_size": True},
}
PROBE_RE = re.compile(r"probe: (\d+) samples, \d+ left after \d+ ops, ([0-9.]+)s in all \(([0-9.]+)s CPU")


def run_once(base: dict, corpus: Path, out_dir: Path, np_: int, mode: str, timeout: float) -> dict:
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    r = dict(base, dataset_path=str(corpus), export_path=str(out_dir / "result.jsonl"), np=np_,
             ds_cache_dir=str(out_dir / "hf_cache"), **SETTINGS[mode])
    recipe = out_dir / "recipe.yaml"
    bl.dump_yaml(r, recipe)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    # no PSS sampling: this benchmark reports none, and reading every process's smaps each 0.1 s costs the
    # run CPU on a 2-core machine (the short adapter-on run most, in share)
    res = bl.run_measured(bl.ours_cmd() + ["--config", str(recipe)], out_dir / "run.log", env=bl.offline_env(),
                          cwd=out_dir, timeout=timeout, pss_interval=float("inf"))
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    res["cpu_s"] = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    export = out_dir / "result.jsonl"
    res["rows_out"] = bl.count_lines(export) if export.exists() else None
    res["export"] = str(export)
    log = Path(res["log"]).read_text(encoding="utf-8", errors="replace")
    m = PROBE_RE.search(log)
    res["probe_samples"] = int(m.group(1)) if m else None
    res["probe_s"] = float(m.group(2)) if m else None
    res["probe_cpu_s"] = float(m.group(3)) if m else None
    res["log_lines"] = [ln for ln in log.splitlines() if "moved ahead" in ln or "reordered" in ln
                        or "fused into" in ln or "batch size" in ln.lower()]
    shutil.rmtree(out_dir / "hf_cache", ignore_errors=True)
    print(f"[adapter] {mode}: rc={res['rc']} wall={res['wall_s']:.1f}s cpu={res['cpu_s']:.1f}s "
          f"rows_out={res['rows_out']} probe={res['probe_s']}s wall / {res['probe_cpu_s']}s CPU "
          f"on {res['probe_samples']} samples", flush=True)
    if res["rc"] != 0:
        print(bl.log_tail(res["log"], 30), file=sys.stderr)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", type=Path, default=HERE / "wrong_order.yaml")
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--np", type=int, default=2, dest="np_")
    ap.add_argument("--rounds", type=int, default=1, help="off/on pairs, alternated")
    ap.add_argument("--work_dir", type=Path, default=HERE / "work")
    ap.add_argument("--timeout", type=float, default=3600)
    a = ap.parse_args(argv)

    corpus = make_corpus(a.num_docs, a.seed)
    n_in = bl.count_lines(corpus)
    base = bl.load_yaml(a.recipe)
    runs: dict[str, list] = {"off": [], "on": []}
    for k in range(a.rounds):
        for mode in ("off", "on"):
            runs[mode].append(run_once(base, corpus, a.work_dir / f"{mode}{k}", a.np_, mode, a.timeout))
    ok = all(r["rc"] == 0 for rs in runs.values() for r in rs)
    first = Path(runs["off"][0]["export"]).read_bytes() if ok else b""
    identical = ok and all(Path(r["export"]).read_bytes() == first for rs in runs.values() for r in rs)

    def med(mode, key):
        vals = [r[key] for r in runs[mode] if r.get(key) is not None]
        return statistics.median(vals) if vals else float("nan")

    rows = []
    for key, label in (("wall_s", "wall (s)"), ("cpu_s", "CPU s, process tree"), ("peak_rss_tree_mb", "peak RSS tree (MB)"),
                       ("rows_out", "documents out")):
        rows.append([label, f"{med('off', key):.1f}", f"{med('on', key):.1f}"])
    probe = med("on", "probe_s")
    probe_cpu = med("on", "probe_cpu_s")
    print(f"\n{a.recipe.name}: {n_in} documents, np={a.np_}, {a.rounds} round(s), medians")
    print(bl.fmt_table(["metric", "adapter off", "adapter on"], rows))
    speed_cpu = med("off", "cpu_s") / med("on", "cpu_s")
    speed_wall = med("off", "wall_s") / med("on", "wall_s")
    print(f"speed-up: {speed_cpu:.2f}x CPU, {speed_wall:.2f}x wall; probe {probe_cpu:.2f}s CPU = "
          f"{100 * probe_cpu / med('on', 'cpu_s'):.1f}% of the adapter-on CPU ({probe:.1f}s wall = "
          f"{100 * probe / med('on', 'wall_s'):.1f}% of its wall time); "
          f"outputs {'byte-identical' if identical else 'DIFFERENT'}")
    for ln in runs["on"][0]["log_lines"]:
        print("  " + ln.split("| ")[-1])
    report = {"recipe": str(a.recipe), "docs_in": n_in, "np": a.np_, "runs": runs, "identical": identical,
              "speedup_cpu": speed_cpu, "speedup_wall": speed_wall, "probe_s": probe, "probe_cpu_s": probe_cpu}
    a.work_dir.mkdir(parents=True, exist_ok=True)
    (a.work_dir / "report.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    if not identical:
        print("adapter on and off gave different outputs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
