#!/usr/bin/env python
"""Dedup benchmark: speed, memory and accuracy of each dedup method on a labelled corpus.

  python benchmarks/dedup/run.py                      # ours: exact, MinHash, SimHash
  python benchmarks/dedup/run.py --with-dj            # + Data-Juicer 1.6.1 side by side

Each method runs as a one-op recipe through ``dj-process --config`` (np workers) in a subprocess;
the script samples the memory of its process tree and takes its CPU time (user + sys of the
whole tree, from the kernel's accounting of waited-for children), and reads the op's own
seconds from the log. Accuracy is scored against the corpus labels (``meta.dup_of``): documents
copying one another form a cluster; of a cluster of n documents n - 1 should go. A removed
document counts as a true positive while fewer than n - 1 of its cluster were removed, so
removing a whole cluster, or removing a document that copies nothing, costs precision.
Recall is also given per kind of copy (exact, near, near_heavy): a copy counts as found when
it or the document it copies was removed. With ``--with-dj`` the kept ids are compared.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import benchlib as bl  # noqa: E402
from make_corpus import make_corpus  # noqa: E402

METHODS = {
    "exact": {"document_deduplicator": {}},
    "minhash": {"document_minhash_deduplicator": {}},  # space tokens, 5-shingles, 256 permutations, Jaccard 0.7
    "simhash": {"document_simhash_deduplicator": {}},  # 6-shingles, 6 blocks, Hamming distance 4
}


# ------------------------------------------------------------------ scoring
def load_labels(corpus: Path) -> tuple[list[str], dict, dict, dict]:
    """(ids in order, id -> cluster root, id -> the id it copies (itself for an original), id -> dup kind)."""
    ids, parent, kind = [], {}, {}
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            ids.append(d["id"])
            parent[d["id"]] = d["meta"]["dup_of"] or d["id"]
            kind[d["id"]] = d["meta"]["dup_kind"]
    root = {}
    for i in ids:
        r = i
        while parent[r] != r:
            r = parent[r]
        root[i] = r
    return ids, root, parent, kind


def score(kept_ids: set, ids: list[str], root: dict, parent: dict, kind: dict) -> dict:
    size = Counter(root[i] for i in ids)
    removed = [i for i in ids if i not in kept_ids]
    taken = Counter()
    tp = 0
    for i in removed:
        r = root[i]
        if taken[r] < size[r] - 1:
            tp += 1
        taken[r] += 1
    expected = sum(n - 1 for n in size.values())
    out = {"removed": len(removed), "expected": expected, "true_pos": tp,
           "precision": tp / len(removed) if removed else 1.0, "recall": tp / expected if expected else 1.0}
    by_kind = Counter()
    found = Counter()
    for i in ids:
        k = kind[i]
        if not k:
            continue
        by_kind[k] += 1
        if i not in kept_ids or parent[i] not in kept_ids:
            found[k] += 1
    out["recall_by_kind"] = {k: found[k] / by_kind[k] for k in sorted(by_kind)}
    return out


# ------------------------------------------------------------------ runs
def cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_recipe(label: str, argv: list[str], corpus: Path, op: dict, out_dir: Path, np_: int, env: dict,
               timeout: float, dj: bool) -> dict:
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    recipe = {"project_name": f"dedup-{label}", "dataset_path": str(corpus),
              "export_path": str(out_dir / "result.jsonl"), "np": np_, "process": [op]}
    if dj:
        recipe["ds_cache_dir"] = str(out_dir / "hf_cache")  # fresh: no cached Arrow results reused
    else:
        recipe["use_cache"] = False  # no pass results reused from an earlier run
        recipe["open_tracer"] = False
    path = out_dir / "recipe.yaml"
    bl.dump_yaml(recipe, path)
    print(f"[run] {label}", flush=True)
    cpu0 = cpu_children()
    res = bl.run_measured(argv + ["--config", str(path)], out_dir / "run.log", env=env, cwd=out_dir, timeout=timeout)
    res["cpu_s"] = cpu_children() - cpu0
    export = out_dir / "result.jsonl"
    res["status"] = "ok" if res["rc"] == 0 and export.exists() else ("TIMEOUT" if res["timed_out"] else "FAILED")
    res["export"] = str(export)
    res["op_s"] = op_seconds(res["log"], next(iter(op)))
    if res["status"] != "ok":
        print(bl.log_tail(res["log"], 30), file=sys.stderr)
    shutil.rmtree(out_dir / "hf_cache", ignore_errors=True)
    return res


_STAGE_RE = re.compile(r"\[([a-z0-9_ +]+)\] \d+ -> \d+ samples in ([\d.]+)s")
_DJ_OP_RE = re.compile(r"OP \[(\w+)\] Done in ([\d.]+)s")


def op_seconds(log, op_name: str):
    """Wall seconds of the dedup op: Data-Juicer's 'OP [x] Done in' line, or the sum of our stage
    lines that name it (its hashing pass, then its dataset-level step)."""
    text = Path(log).read_text(encoding="utf-8", errors="replace")
    dj = [float(m.group(2)) for m in _DJ_OP_RE.finditer(text) if m.group(1) == op_name]
    if dj:
        return dj[-1]
    ours = [float(m.group(2)) for m in _STAGE_RE.finditer(text) if op_name in m.group(1)]
    return sum(ours) if ours else None


def kept_ids_of(export: str) -> list[str]:
    out = []
    with open(export, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line)["id"])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="Dedup benchmark (ours vs Data-Juicer 1.6.1).")
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--np", type=int, default=2, dest="np_")
    ap.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated, of {', '.join(METHODS)}")
    ap.add_argument("--work_dir", type=Path, default=HERE / "work")
    ap.add_argument("--with-dj", action="store_true", help="also run Data-Juicer 1.6.1 and compare kept ids")
    ap.add_argument("--dj-python", default=None, help="DJ venv folder, its python or its dj-process")
    ap.add_argument("--timeout", type=float, default=3600)
    a = ap.parse_args(argv)
    a.work_dir = a.work_dir.resolve()

    corpus = make_corpus(a.num_docs, a.seed)
    ids, root, parent, kind = load_labels(corpus)
    n_in = len(ids)
    methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    results = {}
    for m in methods:
        op = METHODS[m]
        r = run_recipe(f"ours-{m}", bl.ours_cmd(), corpus, op, a.work_dir / "ours" / m, a.np_, bl.offline_env(),
                       a.timeout, dj=False)
        results[("ours", m)] = r
        if a.with_dj:
            _, dj_bin = bl.dj_paths(a.dj_python)
            r = run_recipe(f"dj-{m}", bl.no_network_prefix() + [dj_bin], corpus, op, a.work_dir / "dj" / m, a.np_,
                           bl.offline_env(reference=True), a.timeout, dj=True)
            results[("dj", m)] = r

    rows = []
    report = {"corpus": str(corpus), "docs_in": n_in, "np": a.np_, "host": platform.node(),
              "cpus": os.cpu_count(), "runs": []}
    kept = {}
    for (engine, m), r in results.items():
        line = {"engine": engine, "method": m, **{k: r.get(k) for k in (
            "status", "wall_s", "cpu_s", "op_s", "peak_pss_tree_mb", "peak_rss_tree_mb", "peak_rss_proc_mb")}}
        if r["status"] == "ok":
            k = kept_ids_of(r["export"])
            kept[(engine, m)] = k
            line.update(score(set(k), ids, root, parent, kind))
        report["runs"].append(line)
        sc = line
        rows.append([engine, m, r["status"], f"{r['wall_s']:.1f}", f"{r['cpu_s']:.1f}",
                     f"{r['op_s']:.1f}" if r.get("op_s") is not None else "-",
                     f"{n_in / r['wall_s']:.0f}", f"{n_in / r['op_s']:.0f}" if r.get("op_s") else "-",
                     f"{r['peak_pss_tree_mb']:.0f}", f"{r['peak_rss_tree_mb']:.0f}",
                     sc.get("removed", "-"), f"{sc['precision']:.4f}" if "precision" in sc else "-",
                     f"{sc['recall']:.4f}" if "recall" in sc else "-",
                     " ".join(f"{k}={v:.3f}" for k, v in sc.get("recall_by_kind", {}).items())])
    print()
    print(f"corpus {corpus.name}: {n_in} docs, {corpus.stat().st_size / 1e6:.1f} MB, "
          f"{report['runs'][0]['expected'] if report['runs'] and 'expected' in report['runs'][0] else '?'} "
          f"labelled removals expected; np={a.np_}; host {platform.node()} ({os.cpu_count()} CPUs)")
    print(bl.fmt_table(["engine", "method", "status", "wall s", "cpu s", "op s", "docs/s (wall)", "docs/s (op)",
                        "peak PSS MB", "peak RSS MB", "removed", "precision", "recall", "recall by kind"], rows))
    if a.with_dj:
        print("\nours vs Data-Juicer 1.6.1:")
        for m in methods:
            o, d = results.get(("ours", m)), results.get(("dj", m))
            if not o or not d or o["status"] != "ok" or d["status"] != "ok":
                continue
            same = kept[("ours", m)] == kept[("dj", m)]
            ratio_op = (d["op_s"] / o["op_s"]) if o.get("op_s") and d.get("op_s") else None
            comp = {"method": m, "same_kept_ids": same, "wall_ratio": d["wall_s"] / o["wall_s"],
                    "cpu_ratio": d["cpu_s"] / o["cpu_s"] if o["cpu_s"] else None, "op_ratio": ratio_op,
                    "pss_ratio": d["peak_pss_tree_mb"] / o["peak_pss_tree_mb"] if o["peak_pss_tree_mb"] else None}
            report.setdefault("comparison", []).append(comp)
            print(f"  {m:8s} kept ids identical: {same}; DJ/ours: wall {comp['wall_ratio']:.1f}x, "
                  f"cpu {comp['cpu_ratio']:.1f}x, op {ratio_op:.1f}x, peak PSS {comp['pss_ratio']:.2f}x"
                  if ratio_op else f"  {m:8s} kept ids identical: {same}; DJ/ours wall {comp['wall_ratio']:.1f}x")
    a.work_dir.mkdir(parents=True, exist_ok=True)
    (a.work_dir / "report.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    print(f"\nreport: {a.work_dir / 'report.json'}")
    return 0 if all(r["status"] == "ok" for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
