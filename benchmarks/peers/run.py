#!/usr/bin/env python
"""Peers benchmark: our MinHash dedup and filter chain beside datatrove's and NeMo Curator's, in one run,
same corpus.

  python benchmarks/peers/run.py                          # 50,000 labelled docs, np 2, everything
  python benchmarks/peers/run.py --parts minhash --num_docs 5000
  python benchmarks/peers/run.py --dt-venv /work/dtvenv   # datatrove 0.10 lives in its own venv
  python benchmarks/peers/run.py --parts filters --nc-venv /work/nemovenv   # NeMo Curator 1.4 too

Corpus: ``benchmarks/dedup/make_corpus.py`` (labelled copies, ``meta.dup_of`` / ``meta.dup_kind``).
Ours runs as a one-op (or 8-filter) recipe through ``dj-process``; datatrove runs
``dt_pipeline.py`` under the datatrove venv's python, on the same documents split into ``np``
JSONL shards (datatrove hands each task whole files); NeMo Curator's filter chains run
``nc_pipeline.py`` under its venv's python on the same shards, on a local Ray of ``np`` CPUs (its
fuzzy dedup needs a GPU, so it has no MinHash run here). All with ``np`` workers.

Per run: wall seconds, CPU seconds (user + sys of the whole process tree), docs/s (input docs /
wall), peak PSS, anonymous RSS and anonymous PSS (`Pss_Anon`: pages shared copy-on-write with forked
workers counted once) of the process tree, and the same figures of a run over the
first 100 documents ("fixed": interpreter, imports, workers), so that ``peak - fixed`` is the
memory that grows with the data. Dedup runs are scored as ``benchmarks/dedup/run.py`` scores
them (precision, recall, recall per kind of copy). Everything goes to ``WORK/report.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "dedup"))

import benchlib as bl  # noqa: E402
from make_corpus import make_corpus  # noqa: E402
from run import cpu_children, kept_ids_of, load_labels, score  # noqa: E402  (benchmarks/dedup/run.py)

# same MinHash on both sides: 5-word shingles, 14 bands x 8 rows = 112 permutations (datatrove's default)
WINDOW, BANDS, ROWS = 5, 14, 8
OUR_MINHASH = {"tokenization": "space", "window_size": WINDOW, "lowercase": True,
               "num_permutations": BANDS * ROWS, "num_bands": BANDS, "num_rows_per_band": ROWS}
# our engines: label -> recipe ops
OURS = {
    "minhash": [{"document_minhash_deduplicator": dict(OUR_MINHASH)}],
    "minhash-whole": [{"document_minhash_deduplicator": dict(OUR_MINHASH, short_texts="whole")}],
    # + datatrove-like normalisation: compare with datatrove's minhash-simplify
    "minhash-whole-simplify": [{"document_minhash_deduplicator": dict(OUR_MINHASH, short_texts="whole",
                                                                      simplify=True)}],
}
# datatrove engines: label -> dt_pipeline.py arguments
DT = {
    "minhash": ["minhash", "--tokenizer", "space", "--norm", "lower"],  # our shingles exactly
    "minhash-simplify": ["minhash", "--tokenizer", "space", "--norm", "default"],  # + its simplify_text
    "minhash-spacy": ["minhash", "--tokenizer", "spacy", "--norm", "default"],  # its defaults
    "minhash-op": ["minhash", "--tokenizer", "space", "--norm", "lower"],  # with --np 1: in-process
    "filters": ["filters", "--tokenizer", "space"],
    "filters-spacy": ["filters", "--tokenizer", "spacy"],
}
# NeMo Curator engines: label -> nc_pipeline.py arguments (its own venv, ``--nc-venv``)
NC = {
    "filters-english": ["filters", "--chain", "english", "--backend", "ray_data"],  # its published English chain
    "filters-closest8": ["filters", "--chain", "closest8", "--backend", "ray_data"],  # its 8 closest to ours
    "filters-english-xenna": ["filters", "--chain", "english", "--backend", "xenna", "--mode", "batch"],
}
# the op alone in one process (np 1): ours without the executor (op_mem.py), datatrove's stages in-process
OP_ONLY = {"minhash-op": "shared", "minhash-op-whole": "whole"}
PARTS = {"minhash": (["minhash", "minhash-whole", "minhash-whole-simplify"],
                     ["minhash", "minhash-simplify", "minhash-spacy"], []),
         "op": (list(OP_ONLY), ["minhash-op"], []),
         "filters": (["filters"], ["filters", "filters-spacy"],
                     ["filters-english", "filters-closest8", "filters-english-xenna"])}


def our_filters() -> list[dict]:
    """The 8 filters of benchmarks/text_pipeline/recipe.yaml, as they are there."""
    recipe = bl.load_yaml(HERE.parent / "text_pipeline" / "recipe.yaml")
    return [op for op in recipe["process"] if next(iter(op)).endswith("_filter")]


def shard(corpus: Path, n_docs: int | None, parts: int, folder: Path) -> Path:
    """The corpus (or its first ``n_docs``) as ``parts`` JSONL files of consecutive documents."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    with open(corpus, encoding="utf-8") as f:
        lines = [ln for ln in f if ln.strip()]
    if n_docs:
        lines = lines[:n_docs]
    step = -(-len(lines) // parts)
    for p in range(parts):
        (folder / f"part_{p:05d}.jsonl").write_text("".join(lines[p * step:(p + 1) * step]), encoding="utf-8")
    return folder


_pss_anon = bl.pss_anon


def run_tree(argv: list[str], log_path: Path, env: dict, cwd: Path, timeout: float, interval: float = 0.1) -> dict:
    """Run ``argv``, sampling its process tree: peak PSS and anonymous RSS (sums over the tree),
    and each process's latest CPU times. The CPU of the tree is the larger of two lower bounds:
    the kernel's account of waited-for descendants (misses processes nobody waited for, such as
    pool workers that are terminated) and the sum over sampled processes of their last CPU times
    (misses what a process did after its last sample, and processes shorter than ``interval``)."""
    import subprocess
    import time

    import psutil

    cpu0 = cpu_children()
    peak_pss = peak_anon = peak_anon_pss = nmax = 0
    cpu_seen: dict = {}
    with open(log_path, "w", encoding="utf-8") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        root = psutil.Process(proc.pid)
        timed_out = False
        while proc.poll() is None:
            try:
                procs = [root] + root.children(recursive=True)
            except psutil.Error:
                procs = []
            nmax = max(nmax, len(procs))
            pss = anon = anon_pss = 0
            for q in procs:
                try:
                    with q.oneshot():
                        t = q.cpu_times()
                        cpu_seen[(q.pid, q.create_time())] = t.user + t.system
                        pss += q.memory_full_info().pss
                    anon += bl._rss_anon(q.pid)
                    anon_pss += _pss_anon(q.pid)
                except (psutil.Error, AttributeError):
                    continue
            peak_pss, peak_anon = max(peak_pss, pss), max(peak_anon, anon)
            peak_anon_pss = max(peak_anon_pss, anon_pss)
            if timeout and time.perf_counter() - t0 > timeout:
                timed_out = True
                for q in reversed(procs):
                    try:
                        q.kill()
                    except psutil.Error:
                        pass
                break
            time.sleep(interval)
        rc = proc.wait()
        wall = time.perf_counter() - t0
    waited = cpu_children() - cpu0
    sampled = sum(cpu_seen.values())
    return {"rc": rc, "wall_s": wall, "cpu_s": max(waited, sampled), "cpu_waited_s": waited,
            "cpu_sampled_s": sampled, "peak_pss_tree_mb": peak_pss / 2**20, "peak_anon_tree_mb": peak_anon / 2**20,
            "peak_anon_pss_tree_mb": peak_anon_pss / 2**20, "max_procs": nmax, "timed_out": timed_out, "log": str(log_path)}


def measured(argv: list[str], out_dir: Path, env: dict, timeout: float) -> dict:
    res = run_tree(argv, out_dir / "run.log", env, out_dir, timeout)
    if res["rc"] != 0:
        print(bl.log_tail(res["log"], 30), file=sys.stderr)
    return res


def run_ours(label: str, ops: list[dict], corpus: Path, out_dir: Path, np_: int, timeout: float) -> dict:
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    recipe = {"project_name": f"peers-{label}", "dataset_path": str(corpus), "np": np_,
              "export_path": str(out_dir / "result.jsonl"), "use_cache": False, "open_tracer": False,
              "process": ops}
    bl.dump_yaml(recipe, out_dir / "recipe.yaml")
    res = measured(bl.ours_cmd() + ["--config", str(out_dir / "recipe.yaml")], out_dir, bl.offline_env(), timeout)
    export = out_dir / "result.jsonl"
    res["status"] = "ok" if res["rc"] == 0 and export.exists() else "FAILED"
    res["kept"] = kept_ids_of(export) if res["status"] == "ok" else None
    return res


def run_op_only(label: str, corpus: Path, out_dir: Path, timeout: float) -> dict:
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    argv = [sys.executable, str(HERE / "op_mem.py"), str(corpus), str(out_dir), "--short_texts", OP_ONLY[label],
            "--window", str(WINDOW), "--bands", str(BANDS), "--rows", str(ROWS)]
    res = measured(argv, out_dir, bl.offline_env(), timeout)
    mem = out_dir / "mem.json"
    res["status"] = "ok" if res["rc"] == 0 and mem.exists() else "FAILED"
    if res["status"] == "ok":
        res["kept"] = (out_dir / "kept.txt").read_text(encoding="utf-8").split()
        res["stages"] = json.loads(mem.read_text())
    return res


def run_peer(script: str, args: list[str], shards: Path, out_dir: Path, np_: int, python: str,
             timeout: float) -> dict:
    """A peer's pipeline script (``dt_pipeline.py``, ``nc_pipeline.py``) under its own venv's ``python``: it
    reads the JSONL shards and writes the kept documents to ``out_dir/out`` and its phases to ``stages.json``."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    argv = [python, str(HERE / script)] + args + ["--input", str(shards), "--work", str(out_dir), "--np", str(np_)]
    env = bl.offline_env()
    env.pop("PYTHONPATH", None)
    res = measured(argv, out_dir, env, timeout)
    out = out_dir / "out"
    res["status"] = "ok" if res["rc"] == 0 and out.exists() else "FAILED"
    if res["status"] == "ok":
        res["kept"] = [i for p in sorted(out.glob("*.jsonl")) for i in kept_ids_of(str(p))]
        stages = out_dir / "stages.json"
        res["stages"] = json.loads(stages.read_text()) if stages.exists() else None
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Ours vs datatrove and NeMo Curator, side by side.")
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--np", type=int, default=2, dest="np_")
    ap.add_argument("--parts", default="minhash,filters")
    ap.add_argument("--ours", default=None, help="comma-separated labels of our runs (default: all of the parts)")
    ap.add_argument("--dt", default=None, help="comma-separated labels of datatrove runs (default: all)")
    ap.add_argument("--dt-venv", default="/work/dtvenv")
    ap.add_argument("--nc", default=None, help="comma-separated labels of NeMo Curator runs (default: all, "
                                               "when --nc-venv exists; 'none': no NeMo Curator runs)")
    ap.add_argument("--nc-venv", default="/work/nemovenv")
    ap.add_argument("--fixed_docs", type=int, default=100, help="docs of the 'fixed cost' run (0: none)")
    ap.add_argument("--work_dir", type=Path, default=HERE / "work")
    ap.add_argument("--timeout", type=float, default=3600)
    a = ap.parse_args(argv)
    work = a.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    dt_python = str(Path(a.dt_venv) / "bin" / "python")
    nc_python = str(Path(a.nc_venv) / "bin" / "python")

    corpus = make_corpus(a.num_docs, a.seed)
    ids, root, parent, kind = load_labels(corpus)
    shards = {k: shard(corpus, None, k, work / f"shards_{k}") for k in {1, a.np_}}
    small = None
    if a.fixed_docs:
        small = work / "small.jsonl"
        with open(corpus, encoding="utf-8") as f, open(small, "w", encoding="utf-8") as g:
            for i, line in zip(range(a.fixed_docs), f):
                g.write(line)
        small_shards = {k: shard(small, None, k, work / f"small_shards_{k}") for k in {1, a.np_}}

    parts = [p.strip() for p in a.parts.split(",") if p.strip()]
    want_ours = set(a.ours.split(",")) if a.ours else None
    want_dt = set(a.dt.split(",")) if a.dt else None
    want_nc = set(a.nc.split(",")) if a.nc else None
    if want_nc != {"none"} and not Path(nc_python).exists():
        if want_nc:
            ap.error(f"--nc {a.nc}: no NeMo Curator venv at {a.nc_venv} (see benchmarks/peers/README.md)")
        print(f"[skip] NeMo Curator runs: no venv at {a.nc_venv} (see benchmarks/peers/README.md)", flush=True)
        want_nc = {"none"}
    plan = []
    for p in parts:
        o, d, n = PARTS[p]
        plan += [("ours", x) for x in o if want_ours is None or x in want_ours]
        plan += [("datatrove", x) for x in d if want_dt is None or x in want_dt]
        plan += [("nemo_curator", x) for x in n if want_nc is None or x in want_nc]

    runs: list = []

    def summarise(final: bool) -> None:
        rows, report_runs = [], []
        fixed = {(r["engine"], r["label"]): r for r in runs if r["size"] == "fixed"}
        for r in runs:
            if r["size"] != "full":
                continue
            f = fixed.get((r["engine"], r["label"]))
            line = {k: r.get(k) for k in ("engine", "label", "status", "wall_s", "cpu_s", "peak_pss_tree_mb",
                                           "peak_anon_tree_mb", "peak_anon_pss_tree_mb", "cpu_waited_s", "cpu_sampled_s", "max_procs", "stages")}
            line["docs_per_s"] = len(ids) / r["wall_s"]
            if f and f["status"] == "ok":
                line["fixed_pss_mb"], line["fixed_anon_mb"] = f["peak_pss_tree_mb"], f["peak_anon_tree_mb"]
                line["fixed_wall_s"], line["fixed_cpu_s"] = f["wall_s"], f["cpu_s"]
            if r["status"] == "ok":
                line["kept"] = len(r["kept"])
                st = r.get("stages") or {}
                if "base_rss_mb" in st and r["label"] in OP_ONLY:  # one process: its peak above interpreter + imports
                    line["self_base_rss_mb"], line["self_peak_rss_mb"] = st["base_rss_mb"], st["peak_rss_mb"]
                if "minhash" in r["label"]:
                    line.update(score(set(r["kept"]), ids, root, parent, kind))
            report_runs.append(line)
            rows.append([r["engine"], r["label"], r["status"], f"{r['wall_s']:.1f}", f"{r['cpu_s']:.1f}",
                         f"{line['docs_per_s']:.0f}", f"{r['peak_pss_tree_mb']:.0f}", f"{r['peak_anon_tree_mb']:.0f}",
                         f"{r['peak_anon_pss_tree_mb']:.0f}" if r.get("peak_anon_pss_tree_mb") else "-",
                         f"{line['fixed_pss_mb']:.0f}" if "fixed_pss_mb" in line else "-",
                         f"{r['peak_pss_tree_mb'] - line['fixed_pss_mb']:.0f}" if "fixed_pss_mb" in line else "-",
                         f"{line['self_base_rss_mb']:.0f} / {line['self_peak_rss_mb']:.0f}"
                         if "self_base_rss_mb" in line else "-",
                         line.get("kept", "-"),
                         f"{line['precision']:.4f}" if "precision" in line else "-",
                         f"{line['recall']:.4f}" if "recall" in line else "-",
                         " ".join(f"{k}={v:.3f}" for k, v in line.get("recall_by_kind", {}).items())])
        if not final:
            (work / "report.json").write_text(json.dumps({"partial": True, "runs": report_runs}, indent=1,
                                                         default=str) + "\n")
            return
        print(f"\ncorpus {corpus.name}: {len(ids)} docs, {corpus.stat().st_size / 1e6:.1f} MB; np={a.np_}; "
              f"host {platform.node()} ({os.cpu_count()} CPUs); fixed = the same run over {a.fixed_docs} docs")
        print(bl.fmt_table(["engine", "run", "status", "wall s", "CPU s", "docs/s", "peak PSS MB", "peak anon MB",
                            "peak anon PSS MB", "fixed PSS MB", "PSS - fixed", "1-proc RSS base / peak", "kept", "precision", "recall", "recall by kind"], rows))
        report = {"corpus": str(corpus), "docs_in": len(ids), "np": a.np_, "host": platform.node(),
                  "cpus": os.cpu_count(), "minhash": {"window": WINDOW, "bands": BANDS, "rows": ROWS},
                  "runs": report_runs}
        (work / "report.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
        print(f"\nreport: {work / 'report.json'}")

    for engine, label in plan:
        for size, src in (("full", corpus), ("fixed", small)):
            if src is None or (size == "fixed" and label in OP_ONLY):
                continue  # a one-process run measures its own baseline
            out_dir = work / engine / label / size
            print(f"[run] {engine} {label} ({size})", flush=True)
            if engine == "ours" and label in OP_ONLY:
                r = run_op_only(label, src, out_dir, a.timeout)
            elif engine == "ours":
                ops = our_filters() if label == "filters" else OURS[label]
                r = run_ours(label, ops, src, out_dir, a.np_, a.timeout)
            elif engine == "nemo_curator":
                r = run_peer("nc_pipeline.py", NC[label], (shards if size == "full" else small_shards)[a.np_],
                             out_dir, a.np_, nc_python, a.timeout)
            else:
                np_ = 1 if label in OP_ONLY else a.np_
                dt_args = DT[label] + ["--window", str(WINDOW), "--bands", str(BANDS), "--rows", str(ROWS)]
                r = run_peer("dt_pipeline.py", dt_args, (shards if size == "full" else small_shards)[np_], out_dir,
                             np_, dt_python, a.timeout)
            r.update(engine=engine, label=label, size=size)
            runs.append(r)
            summarise(False)  # a partial report after each run

    summarise(True)
    return 0 if all(r["status"] == "ok" for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
