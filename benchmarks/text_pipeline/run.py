#!/usr/bin/env python
"""Text-pipeline benchmark: one command, ours vs. (optionally) Data-Juicer 1.6.1.

  python benchmarks/text_pipeline/run.py                 # ours only
  python benchmarks/text_pipeline/run.py --with-dj       # + Data-Juicer 1.6.1, side-by-side, output comparison

Builds the corpus if absent (make_corpus.py), writes ``work/recipe_available.yaml`` (recipe.yaml without the
ops that our registry does not have yet; the same recipe is given to both engines), runs each engine's
``dj-process --config`` as a subprocess with ``np`` workers while sampling the RSS of its whole process tree,
and prints documents/s, wall time and peak memory. With ``--with-dj`` the two results (and their
``*_stats.jsonl``) are compared as parsed JSON: row count, kept ids and order, texts, other fields.
A JSON report is written to ``work/report.json``.
"""
from __future__ import annotations

import argparse
import json
import platform
import resource
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import benchlib as bl
from make_corpus import make_corpus


def prepare_recipe(base: dict, corpus: Path, out_dir: Path, np_: int, engine: str) -> Path:
    """Per-engine copy of the recipe with absolute paths, inside its own (fresh) output folder."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    r = dict(base)
    r["dataset_path"] = str(corpus)
    r["export_path"] = str(out_dir / "result.jsonl")
    r["np"] = np_
    # a fresh HF datasets cache: no reuse of Arrow results from an earlier run of the same recipe
    r["ds_cache_dir"] = str(out_dir / "hf_cache")
    if engine == "dj":
        r["open_tracer"] = False
    if engine == "ours_fused":
        r["op_fusion"] = True
        r["fusion_strategy"] = "probe"
        r["adaptive_batch_size"] = True
    path = out_dir / "recipe.yaml"
    bl.dump_yaml(r, path)
    return path


def run_engine(name: str, argv_prefix: list[str], recipe: Path, env: dict, timeout: float) -> dict:
    print(f"[run] {name}: {' '.join(argv_prefix)} --config {recipe}", flush=True)
    # CPU seconds of the whole process tree: RUSAGE_CHILDREN counts every descendant once it is reaped
    # (the workers by dj-process, dj-process by us), so the delta around the run is user+sys of the tree
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = bl.run_measured(argv_prefix + ["--config", str(recipe)], recipe.parent / "run.log", env=env,
                          cwd=recipe.parent, timeout=timeout)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    res["cpu_user_s"] = ru1.ru_utime - ru0.ru_utime
    res["cpu_sys_s"] = ru1.ru_stime - ru0.ru_stime
    res["cpu_s"] = res["cpu_user_s"] + res["cpu_sys_s"]
    export = recipe.parent / "result.jsonl"
    res["export"] = str(export)
    res["rows_out"] = bl.count_lines(export) if export.exists() else None
    res["per_op"] = bl.per_op_log(res["log"])
    status = "ok" if res["rc"] == 0 and export.exists() else ("TIMEOUT" if res["timed_out"] else "FAILED")
    res["status"] = status
    print(f"[run] {name}: {status} rc={res['rc']} wall={res['wall_s']:.1f}s cpu={res['cpu_s']:.1f}s "
          f"(user {res['cpu_user_s']:.1f} + sys {res['cpu_sys_s']:.1f}) rows_out={res['rows_out']}", flush=True)
    if status != "ok":
        print(bl.log_tail(res["log"], 30), file=sys.stderr)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description="Text-cleaning pipeline benchmark (ours vs Data-Juicer 1.6.1).")
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--np", type=int, default=2, dest="np_")
    ap.add_argument("--recipe", type=Path, default=HERE / "recipe.yaml")
    ap.add_argument("--work_dir", type=Path, default=HERE / "work")
    ap.add_argument("--with-dj", action="store_true", help="also run Data-Juicer 1.6.1 and compare")
    ap.add_argument("--fused", action="store_true",
                    help="also run ours with op_fusion + fusion_strategy: probe + adaptive_batch_size")
    ap.add_argument("--dj-only", action="store_true", help="run only Data-Juicer (to check the reference side)")
    ap.add_argument("--dj-python", default=None,
                    help="DJ venv folder, its python or its dj-process (default: env DJ_REF_VENV or /work/djref)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per engine run")
    ap.add_argument("--allow-network", action="store_true",
                    help="do not run Data-Juicer inside an empty network namespace (unshare -n)")
    a = ap.parse_args(argv)

    corpus = make_corpus(a.num_docs, a.seed)
    n_in = bl.count_lines(corpus)
    base = bl.load_yaml(a.recipe)
    want = bl.recipe_ops(base)
    with_dj = a.with_dj or a.dj_only
    run_ours = not a.dj_only

    # ---- which ops can run: ours (registry) and, with DJ, the reference
    keep = set(want)
    dropped_msgs = []
    if run_ours:
        ok, why = bl.ours_available()
        if not ok:
            raise SystemExit(f"our dj-process is not importable yet (data_juicer.cli.process): {why}")
        ours_ops = bl.list_our_ops()
        missing = [o for o in want if o not in ours_ops]
        keep -= set(missing)
        if missing:
            dropped_msgs.append(f"not in our registry yet: {', '.join(missing)}")
    if with_dj:
        dj_py, dj_bin = bl.dj_paths(a.dj_python)
        dj_ops = bl.list_dj_ops(dj_py)
        missing = [o for o in want if o not in dj_ops]
        keep -= set(missing)
        if missing:
            dropped_msgs.append(f"not in Data-Juicer: {', '.join(missing)}")
    recipe, dropped = bl.filter_recipe(base, keep)
    a.work_dir.mkdir(parents=True, exist_ok=True)
    avail_path = a.work_dir / "recipe_available.yaml"
    bl.dump_yaml(recipe, avail_path)
    print(f"[run] corpus: {corpus} ({n_in} docs)")
    print(f"[run] recipe: {len(want)} ops in {a.recipe.name}; running {len(recipe['process'])} "
          f"({avail_path})")
    if dropped:
        print(f"[run] DROPPED from both sides ({len(dropped)}): {', '.join(dropped)}")
        for m in dropped_msgs:
            print(f"[run]   {m}")
    else:
        print("[run] dropped ops: none")

    results = {}
    if run_ours:
        r = prepare_recipe(recipe, corpus, a.work_dir / "ours", a.np_, "ours")
        results["ours"] = run_engine("ours", bl.ours_cmd(), r, bl.offline_env(), a.timeout)
        shutil.rmtree(r.parent / "hf_cache", ignore_errors=True)
        if a.fused:
            r = prepare_recipe(recipe, corpus, a.work_dir / "ours_fused", a.np_, "ours_fused")
            results["ours_fused"] = run_engine("ours (op_fusion)", bl.ours_cmd(), r, bl.offline_env(), a.timeout)
            shutil.rmtree(r.parent / "hf_cache", ignore_errors=True)
    if with_dj:
        r = prepare_recipe(recipe, corpus, a.work_dir / "dj", a.np_, "dj")
        prefix = [] if a.allow_network else bl.no_network_prefix()
        if not a.allow_network and not prefix:
            print("[run] note: unshare -n unavailable; DJ runs with offline env vars only")
        results["dj"] = run_engine("Data-Juicer 1.6.1", prefix + [dj_bin], r, bl.offline_env(reference=True),
                                   a.timeout)
        shutil.rmtree(r.parent / "hf_cache", ignore_errors=True)  # GBs of Arrow cache files, not needed after

    # ---- figures
    names = {"ours": "ours", "ours_fused": "ours, op_fusion", "dj": "DJ 1.6.1"}
    cols = [k for k in ("ours", "ours_fused", "dj") if k in results]
    rows = [["docs in"] + [n_in for _ in cols],
            ["docs out"] + [results[k]["rows_out"] for k in cols],
            ["status"] + [results[k]["status"] for k in cols],
            ["wall (s)"] + [f"{results[k]['wall_s']:.2f}" for k in cols],
            ["docs/s"] + [f"{n_in / results[k]['wall_s']:.0f}" for k in cols],
            ["CPU s, process tree (user+sys)"] + [f"{results[k]['cpu_s']:.1f}" for k in cols],
            ["peak RSS, process tree (MB)"] + [f"{results[k]['peak_rss_tree_mb']:.0f}" for k in cols],
            ["peak RSS, largest process (MB)"] + [f"{results[k]['peak_rss_proc_mb']:.0f}" for k in cols],
            ["peak PSS, process tree (MB)"] + [f"{results[k]['peak_pss_tree_mb']:.0f}" for k in cols],
            ["peak anonymous RSS, tree (MB)"] + [f"{results[k].get('peak_anon_tree_mb', 0):.0f}" for k in cols],
            ["max processes"] + [results[k]["max_procs"] for k in cols]]
    print()
    print(f"corpus {corpus.name}: {n_in} docs, {corpus.stat().st_size / 1e6:.1f} MB; np={a.np_}; "
          f"{len(recipe['process'])} ops; host {platform.node()} ({__import__('os').cpu_count()} CPUs)")
    print(bl.fmt_table(["metric"] + [names[k] for k in cols], rows))
    report = {"corpus": str(corpus), "docs_in": n_in, "np": a.np_, "ops": bl.recipe_ops(recipe),
              "dropped": dropped, "results": results}
    if "ours_fused" in results and "ours" in results:
        same = all(Path(results[k]["export"]).exists() for k in ("ours", "ours_fused")) and \
            Path(results["ours"]["export"]).read_bytes() == Path(results["ours_fused"]["export"]).read_bytes()
        report["fused_output_identical"] = same
        print(f"\nours with op_fusion: output {'byte-identical to' if same else 'DIFFERENT from'} ours without")
    if "ours_fused" in results and "dj" in results:
        ratio_f = results["dj"]["wall_s"] / results["ours_fused"]["wall_s"]
        report["speed_ratio_dj_over_ours_fused"] = ratio_f
        print(f"\nspeed ratio (DJ wall / ours with op_fusion wall): {ratio_f:.2f}x")
    if "ours" in results and "dj" in results:
        o, d = results["ours"], results["dj"]
        ratio = d["wall_s"] / o["wall_s"]
        report["speed_ratio_dj_over_ours"] = ratio
        print(f"\nspeed ratio (DJ wall / ours wall): {ratio:.2f}x"
              f"{'  (ours faster)' if ratio > 1 else '  (DJ faster)'}")
        po, pd = {x[0]: x for x in o["per_op"]}, {x[0]: x for x in d["per_op"]}
        if po or pd:
            print("\nper-op (from the logs; seconds / rows left):")
            print(bl.fmt_table(["op", "ours s", "ours left", "DJ s", "DJ left"],
                               [[op, po.get(op, ("", "", ""))[1], po.get(op, ("", "", ""))[2],
                                 pd.get(op, ("", "", ""))[1], pd.get(op, ("", "", ""))[2]]
                                for op in bl.recipe_ops(recipe)]))
        if o["status"] == "ok" and d["status"] == "ok":
            rows_o, rows_d = bl.load_jsonl(o["export"]), bl.load_jsonl(d["export"])
            cmp = bl.compare_rows(rows_o, rows_d)
            ids_o, ids_d = [r.get("id") for r in rows_o], [r.get("id") for r in rows_d]
            scmp = bl.compare_stats_files(bl.stats_path(o["export"]), bl.stats_path(d["export"]), ids_o, ids_d)
            report["comparison"] = cmp
            report["stats_comparison"] = scmp
            print("\noutput comparison (parsed JSON, ours vs DJ):")
            print(f"  rows: {cmp['rows_ours']} vs {cmp['rows_ref']}; same ids: {cmp['ids_equal']} "
                  f"(only ours {cmp['only_ours']}, only DJ {cmp['only_ref']}); same order: {cmp['order_equal']}")
            print(f"  common ids: text diffs {cmp['text_diffs']}, other-field diffs {cmp['field_diffs']}, "
                  f"stats diffs {cmp['stats_diffs']}")
            if scmp.get("present_ours") or scmp.get("present_ref"):
                print(f"  stats files: {scmp.get('lines_ours')} vs {scmp.get('lines_ref')} lines; "
                      f"{scmp.get('compared', 0)} common ids compared, {scmp['diffs']} differ (floats within 1e-9)")
            for ex in cmp["examples"] + scmp.get("examples", []):
                print(f"    - {ex}")
            # why rows were kept by one side only: their stats on the side that kept them
            set_o, set_d = set(ids_o), set(ids_d)
            only_o = [i for i in ids_o if i not in set_d][:10]
            only_d = [i for i in ids_d if i not in set_o][:10]
            for label, ids, path in (("ours", only_o, o["export"]), ("DJ", only_d, d["export"])):
                st = bl.stats_by_id(path, ids)
                for i in ids:
                    if i in st:
                        print(f"    - kept only by {label}: {i} stats {json.dumps(st[i].get(bl.STATS, st[i]))}")
            same = cmp["equal"] and scmp["equal"]
            report["outputs_identical"] = same
            print(f"  => outputs {'IDENTICAL' if same else 'DIFFER'}")
    (a.work_dir / "report.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    print(f"\nreport: {a.work_dir / 'report.json'}")
    return 0 if all(results[k]["status"] == "ok" for k in cols) else 1


if __name__ == "__main__":
    sys.exit(main())
