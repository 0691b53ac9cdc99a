#!/usr/bin/env python
"""dj-analyze benchmark: ours vs. (optionally) Data-Juicer 1.6.1, side by side.

  python benchmarks/analyze/run.py               # ours only
  python benchmarks/analyze/run.py --with-dj     # + Data-Juicer 1.6.1's dj-analyze, figures side by side

Runs ``dj-analyze --config`` (recipe.yaml: the 8 filters of the text-pipeline benchmark) on the text
benchmark corpus (built by ../text_pipeline/make_corpus.py if absent), each engine as a subprocess in a
fresh output folder, and prints wall time, CPU seconds (user + sys of the whole process tree) and peak
memory. Checks that every expected file was written, and with ``--with-dj`` compares the two
``overall.csv`` tables (relative tolerance 1e-6: Data-Juicer rounds stats to 10 digits).
Everything goes to ``work/report.json``; the run logs are ``work/<engine>/run.log``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import resource
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "text_pipeline"))

import benchlib as bl  # noqa: E402
from make_corpus import make_corpus  # noqa: E402


def ours_analyze() -> list[str]:
    local = Path(sys.executable).parent / "dj-analyze"
    if local.exists():
        return [str(local)]
    found = shutil.which("dj-analyze")
    return [found] if found else [sys.executable, "-c",
                                  "import sys; from data_juicer.cli.analyze import main; sys.exit(main())"]


def prepare(base: dict, corpus: Path, out_dir: Path, np_: int, engine: str) -> Path:
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    r = dict(base, dataset_path=str(corpus), export_path=str(out_dir / "result.jsonl"), np=np_)
    r["ds_cache_dir"] = str(out_dir / "hf_cache")  # both engines: no reuse of cached Arrow results
    path = out_dir / "recipe.yaml"
    bl.dump_yaml(r, path)
    return path


def cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_engine(name: str, argv: list[str], recipe: Path, env: dict, timeout: float) -> dict:
    print(f"[run] {name}: {' '.join(argv)} --config {recipe}", flush=True)
    c0 = cpu_children()
    res = bl.run_measured(argv + ["--config", str(recipe)], recipe.parent / "run.log", env=env, cwd=recipe.parent,
                          timeout=timeout)
    res["cpu_s"] = cpu_children() - c0  # user + sys of the process and every worker it waited for
    jobs = [d for d in recipe.parent.iterdir() if d.is_dir() and (d / "analysis").is_dir()]
    res["analysis_dir"] = str(jobs[0] / "analysis") if jobs else None
    res["files"] = sorted(os.listdir(res["analysis_dir"])) if jobs else []
    res["status"] = "ok" if res["rc"] == 0 and jobs else ("TIMEOUT" if res["timed_out"] else "FAILED")
    print(f"[run] {name}: {res['status']} rc={res['rc']} wall={res['wall_s']:.1f}s cpu={res['cpu_s']:.1f}s",
          flush=True)
    if res["status"] != "ok":
        print(bl.log_tail(res["log"], 30), file=sys.stderr)
    return res


def read_overall(path) -> dict:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return {name: {r[0]: r[1 + i] for r in rows[1:] if r[1 + i] != ""} for i, name in enumerate(rows[0][1:])}


def compare_overall(ours: dict, ref: dict, rel: float = 1e-6) -> list[str]:
    diffs = []
    for stat in sorted(set(ours) | set(ref)):
        if stat not in ours or stat not in ref:
            diffs.append(f"{stat}: only in {'ours' if stat in ours else 'DJ'}")
            continue
        for k in sorted(set(ours[stat]) | set(ref[stat])):
            a, b = ours[stat].get(k), ref[stat].get(k)
            try:
                same = math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-9)
            except (TypeError, ValueError):
                same = a == b
            if not same:
                diffs.append(f"{stat}.{k}: ours {a} vs DJ {b}")
    return diffs


def expected_files(overall: dict) -> set[str]:
    files = {"overall.csv", "overall.md", "stats-corr-pearson.png"}
    for stat, col in overall.items():
        files |= {f"{stat}-hist.png", f"{stat}-box.png"} if "mean" in col else {f"{stat}-hist.png"}
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(description="dj-analyze benchmark (ours vs Data-Juicer 1.6.1).")
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--np", type=int, default=2, dest="np_")
    ap.add_argument("--recipe", type=Path, default=HERE / "recipe.yaml")
    ap.add_argument("--work_dir", type=Path, default=HERE / "work")
    ap.add_argument("--with-dj", action="store_true", help="also run Data-Juicer 1.6.1's dj-analyze")
    ap.add_argument("--dj-only", action="store_true", help="run only Data-Juicer")
    ap.add_argument("--dj-python", default=None,
                    help="DJ venv folder or its python (default $DJ_REF_VENV or /work/djref)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per engine run")
    ap.add_argument("--allow-network", action="store_true", help="do not run Data-Juicer under unshare -n")
    a = ap.parse_args(argv)

    corpus = make_corpus(a.num_docs, a.seed)
    n_in = bl.count_lines(corpus)
    recipe = bl.load_yaml(a.recipe)
    print(f"[run] corpus: {corpus} ({n_in} docs); recipe: {a.recipe} ({len(recipe['process'])} filters), "
          f"np={a.np_}; machine: {platform.node()}, {os.cpu_count()} CPUs")
    a.work_dir.mkdir(parents=True, exist_ok=True)
    results = {}
    if not a.dj_only:
        r = prepare(recipe, corpus, a.work_dir / "ours", a.np_, "ours")
        results["ours"] = run_engine("ours", ours_analyze(), r, bl.offline_env(), a.timeout)
        shutil.rmtree(r.parent / "hf_cache", ignore_errors=True)
    if a.with_dj or a.dj_only:
        dj_py, _ = bl.dj_paths(a.dj_python)
        dj_bin = str(Path(dj_py).parent / "dj-analyze")
        r = prepare(recipe, corpus, a.work_dir / "dj", a.np_, "dj")
        prefix = [] if a.allow_network else bl.no_network_prefix()
        results["dj"] = run_engine("Data-Juicer 1.6.1", prefix + [dj_bin], r, bl.offline_env(reference=True),
                                   a.timeout)
        shutil.rmtree(r.parent / "hf_cache", ignore_errors=True)

    report = {"corpus": str(corpus), "docs": n_in, "np": a.np_, "results": results}
    for k, res in results.items():
        if res["status"] == "ok":
            ov = read_overall(Path(res["analysis_dir"]) / "overall.csv")
            missing = sorted(expected_files(ov) - set(res["files"]))
            res["missing_files"] = missing
            print(f"[check] {k}: {len(res['files'])} files in {res['analysis_dir']}"
                  + (f"; MISSING {missing}" if missing else "; all expected files present")
                  + ("; report.html" if "report.html" in res["files"] else ""))
    if all(k in results and results[k]["status"] == "ok" for k in ("ours", "dj")):
        diffs = compare_overall(read_overall(Path(results["ours"]["analysis_dir"]) / "overall.csv"),
                                read_overall(Path(results["dj"]["analysis_dir"]) / "overall.csv"))
        report["overall_diffs"] = diffs
        print(f"[check] overall.csv ours vs DJ: {'equal (rel 1e-6)' if not diffs else f'{len(diffs)} differences'}")
        for d in diffs[:20]:
            print(f"    {d}")

    cols = [k for k in ("ours", "dj") if k in results]
    names = {"ours": "ours", "dj": "DJ 1.6.1"}
    rows = [["status"] + [results[k]["status"] for k in cols],
            ["wall (s)"] + [f"{results[k]['wall_s']:.1f}" for k in cols],
            ["CPU user+sys (s)"] + [f"{results[k]['cpu_s']:.1f}" for k in cols],
            ["documents/s (wall)"] + [f"{n_in / results[k]['wall_s']:.0f}" for k in cols],
            ["peak PSS, tree (MB)"] + [f"{results[k]['peak_pss_tree_mb']:.0f}" for k in cols],
            ["peak RSS, largest process (MB)"] + [f"{results[k]['peak_rss_proc_mb']:.0f}" for k in cols],
            ["files in analysis/"] + [len(results[k]["files"]) for k in cols]]
    print()
    print(bl.fmt_table(["metric"] + [names[k] for k in cols], rows))
    if len(cols) == 2 and all(results[k]["status"] == "ok" for k in cols):
        ratio = {"wall": results["dj"]["wall_s"] / results["ours"]["wall_s"],
                 "cpu": results["dj"]["cpu_s"] / max(results["ours"]["cpu_s"], 1e-9)}
        report["speedup"] = ratio
        print(f"\nspeed-up (DJ / ours): wall {ratio['wall']:.1f}x, CPU {ratio['cpu']:.1f}x")
    out = a.work_dir / "report.json"
    out.write_text(json.dumps(report, indent=2, default=str))
    print(f"[run] report: {out}")
    return 0 if all(results[k]["status"] == "ok" for k in cols) else 1


if __name__ == "__main__":
    sys.exit(main())
