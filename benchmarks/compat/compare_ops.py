#!/usr/bin/env python
"""Per-op equality check against Data-Juicer 1.6.1.

  python benchmarks/compat/compare_ops.py                        # every text/general op both registries have
  python benchmarks/compat/compare_ops.py clean_html_mapper words_num_filter --n 500
  python benchmarks/compat/compare_ops.py remove_long_words_mapper --params 'remove_long_words_mapper={"max_len": 20}'

For each op, a one-op recipe runs over the first N documents of the benchmark corpus
(benchmarks/text_pipeline/make_corpus.py) with both ``dj-process`` commands, keeping stats in the result
(``keep_stats_in_res_ds: true``). Compared as parsed JSON: kept ids (and their order), texts, other fields,
and ``__dj__stats__`` values (floats within 1e-9). Data-Juicer results are cached under
``work/dj_cache`` (keyed by op, params, input and DJ version); ``--no-cache`` recomputes them.
Writes ``work/compat_report.json`` and ``work/compat_table.md``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "text_pipeline"))

import benchlib as bl
from make_corpus import make_corpus

# Params for ops whose defaults do nothing useful (or need a field) on this corpus.
OP_PARAMS = {
    "remove_long_words_mapper": {"min_len": 1, "max_len": 25},
    "replace_content_mapper": {"pattern": r"\d{3,}", "repl": "<NUM>"},
    "python_lambda_mapper": {"lambda_str": "lambda sample: {**sample, 'text': sample['text'].strip().lower()}"},
    "general_field_filter": {"filter_condition": "meta.content_length > 500 and meta.lang != 'ru'"},
    "specified_field_filter": {"field_key": "meta.source", "target_value": ["fortunes", "shakespeare", "code"]},
    "specified_numeric_field_filter": {"field_key": "meta.content_length", "min_value": 200, "max_value": 5000},
    "suffix_filter": {"suffixes": []},
    "random_selector": {"select_num": 500},
    "range_specified_field_selector": {"field_key": "meta.content_length", "lower_percentile": 0.25,
                                       "upper_percentile": 0.75},
    "topk_specified_field_selector": {"field_key": "meta.content_length", "topk": 100},
    "frequency_specified_field_selector": {"field_key": "meta.lang", "topk": 3},
    "tags_specified_field_selector": {"field_key": "meta.lang", "target_tags": ["en", "de"]},
}
MODALITIES = ("text", "general")


def our_modalities(names) -> dict:
    """{op: modality or 'ERROR: ...'} from our registry, in a subprocess (a broken op file cannot stop us)."""
    code = ("import json, sys\nfrom data_juicer.ops.registry import OPERATORS\nout = {}\n"
            "for n in sys.argv[1:]:\n"
            "    try:\n        out[n] = getattr(OPERATORS.get(n), 'modality', None)\n"
            "    except Exception as e:\n        out[n] = 'ERROR: %s' % e\n"
            "print(json.dumps(out))")
    r = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, cwd=bl.REPO_ROOT,
                       check=False)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {n: f"ERROR: {r.stderr[-300:]}" for n in names}


def dj_version(dj_python: str) -> str:
    r = subprocess.run([dj_python, "-c", "import importlib.metadata as m; print(m.version('py-data-juicer'))"],
                       capture_output=True, text=True, cwd="/", env=bl.offline_env(reference=True), check=False)
    return r.stdout.strip() or "unknown"


def normalise(rows: list[dict]) -> list[dict]:
    # an empty __dj__meta__/__dj__stats__ dict and an absent one mean the same thing
    return [{k: v for k, v in r.items() if not (k.startswith("__dj__") and v in ({}, None))} for r in rows]


def one_op_recipe(op: str, params: dict, subset: Path, out_dir: Path, np_: int, dj: bool,
                  prelude: list | None = None) -> Path:
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    r = {"project_name": f"compat_{op}", "dataset_path": str(subset), "export_path": str(out_dir / "result.jsonl"),
         "np": np_, "text_keys": "text", "keep_stats_in_res_ds": True, "keep_hashes_in_res_ds": False,
         "process": list(prelude or []) + [{op: dict(params) or None}]}
    if dj:
        r["ds_cache_dir"] = str(out_dir / "hf_cache")
    path = out_dir / "recipe.yaml"
    bl.dump_yaml(r, path)
    return path


_DJ_BATCH = """
import sys, traceback, pathlib
from data_juicer.config import init_configs
from data_juicer.core import DefaultExecutor
for p in sys.argv[1:]:
    d = pathlib.Path(p).parent
    print('=== DJ one-op recipe', p, flush=True)
    try:
        DefaultExecutor(init_configs(['--config', p])).run()
        if (d / 'result.jsonl').exists():
            (d / 'ok').write_text('')
    except BaseException:
        (d / 'error.txt').write_text(traceback.format_exc())
        traceback.print_exc()
"""


def run_dj_batch(jobs, work, np_, dj_bin, dj_python, use_cache, timeout, separate, prelude=None):
    """Run the uncached Data-Juicer one-op recipes; returns {op: result dict}.

    By default all of them run in ONE Data-Juicer process (the same calls its dj-process makes: init_configs
    then DefaultExecutor.run), which saves its ~10 s start-up per op; ``separate`` runs dj-process per op.
    """
    results, todo = {}, []
    for op, params, subset, key in jobs:
        cache_dir = work / "dj_cache" / key
        if use_cache and (cache_dir / "ok").exists():
            results[op] = {"status": "ok", "export": str(cache_dir / "result.jsonl"), "cached": True,
                           "log": str(cache_dir / "run.log")}
            continue
        recipe = one_op_recipe(op, params, subset, cache_dir, np_, dj=True, prelude=prelude)
        todo.append((op, cache_dir, recipe))
    if todo and not separate:
        print(f"[compat] running {len(todo)} one-op recipes in one Data-Juicer process ...", flush=True)
        res = bl.run_measured(bl.no_network_prefix() + [dj_python, "-c", _DJ_BATCH] + [str(r) for _, _, r in todo],
                              work / "dj_batch.log", env=bl.offline_env(reference=True), cwd="/",
                              timeout=timeout * len(todo))
        for op, cache_dir, _ in todo:
            ok = (cache_dir / "ok").exists()
            err = cache_dir / "error.txt"
            results[op] = {"status": "ok" if ok else "error", "export": str(cache_dir / "result.jsonl"),
                           "log": str(err if err.exists() else res["log"]), "cached": False}
    for op, cache_dir, recipe in (todo if separate else []):
        res = bl.run_measured(bl.no_network_prefix() + [dj_bin, "--config", str(recipe)], cache_dir / "run.log",
                              env=bl.offline_env(reference=True), cwd=cache_dir, timeout=timeout)
        res["export"] = str(cache_dir / "result.jsonl")
        res["status"] = "ok" if res["rc"] == 0 and Path(res["export"]).exists() else "error"
        if res["status"] == "ok":
            (cache_dir / "ok").write_text("")
        results[op] = res
    for _, cache_dir, _ in todo:
        shutil.rmtree(cache_dir / "hf_cache", ignore_errors=True)
    return results


def run_ours(op, params, subset, work, np_, timeout, prelude=None):
    out_dir = work / "ours" / op
    recipe = one_op_recipe(op, params, subset, out_dir, np_, dj=False, prelude=prelude)
    res = bl.run_measured(bl.ours_cmd() + ["--config", str(recipe)], out_dir / "run.log", env=bl.offline_env(),
                          cwd=out_dir, timeout=timeout)
    res["export"] = str(out_dir / "result.jsonl")
    res["status"] = "ok" if res["rc"] == 0 and Path(res["export"]).exists() else "error"
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description="Per-op equality check: ours vs Data-Juicer 1.6.1.")
    ap.add_argument("ops", nargs="*", help="op names (default: every text/general op in both registries)")
    ap.add_argument("--n", type=int, default=2000, help="first N corpus documents")
    ap.add_argument("--np", type=int, default=1, dest="np_")
    ap.add_argument("--num_docs", type=int, default=50000, help="corpus size to take the first N from")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--dj-python", default=None, help="DJ venv folder / python / dj-process (env DJ_REF_VENV)")
    ap.add_argument("--params", action="append", default=[], metavar="OP=JSON",
                    help="override an op's params, e.g. 'text_length_filter={\"min_len\": 100}'")
    ap.add_argument("--work_dir", type=Path, default=HERE / "work")
    ap.add_argument("--no-cache", action="store_true", help="recompute Data-Juicer results")
    ap.add_argument("--dj-separate", action="store_true",
                    help="one dj-process per op instead of one Data-Juicer process for all ops (slower)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per op run")
    ap.add_argument("--examples", type=int, default=3, help="difference examples printed per op")
    ap.add_argument("--prelude", default=None, metavar="JSON",
                    help='op list run before each tested op on both sides, e.g. '
                         '\'[{"text_length_filter": {"min_len": 0}}]\'')
    a = ap.parse_args(argv)

    ok, why = bl.ours_available()
    if not ok:
        raise SystemExit(f"our dj-process is not importable yet (data_juicer.cli.process): {why}")
    dj_py, dj_bin = bl.dj_paths(a.dj_python)
    version = dj_version(dj_py)
    params_for = {k: dict(v) for k, v in OP_PARAMS.items()}
    for item in a.params:
        name, _, js = item.partition("=")
        params_for[name] = json.loads(js) if js else {}

    ours_ops, dj_ops = bl.list_our_ops(), bl.list_dj_ops(dj_py)
    skipped = []
    if a.ops:
        ops = a.ops
    else:
        common = sorted(ours_ops & dj_ops)
        mods = our_modalities(common)
        ops = [o for o in common if mods.get(o) in MODALITIES]
        skipped = [f"{o} ({mods.get(o)})" for o in common if mods.get(o) not in MODALITIES]
        only_ours = sorted(ours_ops - dj_ops)
        if only_ours:
            print(f"[compat] in our registry but not in Data-Juicer (skipped): {', '.join(only_ours)}")
    if skipped:
        print(f"[compat] skipped (modality not text/general, or failed to import): {', '.join(skipped)}")

    corpus = make_corpus(a.num_docs, a.seed)
    a.work_dir.mkdir(parents=True, exist_ok=True)
    subset = a.work_dir / f"input_{a.n}_{corpus.stem}.jsonl"
    if not subset.exists():
        with open(corpus, encoding="utf-8") as src, open(subset, "w", encoding="utf-8") as dst:
            for k, line in enumerate(src):
                if k >= a.n:
                    break
                dst.write(line)
    n_in = bl.count_lines(subset)
    subset_hash = hashlib.sha1(subset.read_bytes()).hexdigest()[:12]
    prelude = json.loads(a.prelude) if a.prelude else None
    if isinstance(prelude, dict):
        prelude = [prelude]
    if prelude:
        print(f"[compat] prelude before each op: {prelude}")
    print(f"[compat] {len(ops)} ops over {n_in} docs ({subset}); Data-Juicer {version}; np={a.np_}")

    jobs = []
    for op in ops:
        params = params_for.get(op, {})
        key_src = json.dumps({"op": op, "params": params, "input": subset_hash, "dj": version, "np": a.np_,
                              **({"prelude": prelude} if prelude else {})}, sort_keys=True)
        jobs.append((op, params, subset, f"{op}-{hashlib.sha1(key_src.encode()).hexdigest()[:10]}"))
    dj_results = run_dj_batch(jobs, a.work_dir, a.np_, dj_bin, dj_py, not a.no_cache, a.timeout, a.dj_separate,
                               prelude)

    table, report = [], {}
    for op, params, _, _ in jobs:
        ours = run_ours(op, params, subset, a.work_dir, a.np_, a.timeout, prelude)
        dj = dj_results[op]
        entry = {"params": params, "ours": {k: ours.get(k) for k in ("status", "wall_s", "log")},
                 "dj": {k: dj.get(k) for k in ("status", "wall_s", "log", "cached")}}
        kept_o = bl.count_lines(ours["export"]) if ours["status"] == "ok" else "-"
        kept_d = bl.count_lines(dj["export"]) if dj["status"] == "ok" else "-"
        if ours["status"] != "ok" and dj["status"] != "ok":
            verdict, detail = "ERROR (both)", ""
        elif ours["status"] != "ok":
            verdict, detail = "ERROR (ours)", bl.log_tail(ours["log"], 3).splitlines()[-1:] or [""]
            detail = detail[0][:160]
        elif dj["status"] != "ok":
            verdict, detail = "ERROR (DJ)", (bl.log_tail(dj["log"], 1).splitlines()[-1:] or [""])[0][:160]
        else:
            cmp = bl.compare_rows(normalise(bl.load_jsonl(ours["export"])), normalise(bl.load_jsonl(dj["export"])),
                                  max_examples=a.examples)
            entry["comparison"] = cmp
            verdict = "yes" if cmp["equal"] else "NO"
            parts = []
            if not cmp["ids_equal"]:
                parts.append(f"ids (+{cmp['only_ours']} ours/+{cmp['only_ref']} DJ)")
            elif not cmp["order_equal"]:
                parts.append("order")
            for k, label in (("text_diffs", "text"), ("stats_diffs", "stats"), ("field_diffs", "fields")):
                if cmp[k]:
                    parts.append(f"{label} {cmp[k]}")
            detail = ", ".join(parts)
        table.append([op, n_in, kept_o, kept_d, verdict, detail, f"{ours['wall_s']:.1f}"])
        report[op] = entry
        print(f"[compat] {op}: {verdict} {detail}", flush=True)

    header = ["op", "rows in", "kept ours", "kept DJ", "equal?", "differences", "ours wall s"]
    text = bl.fmt_table(header, table)
    print()
    print(text)
    n_eq = sum(1 for r in table if r[4] == "yes")
    print(f"\n{n_eq}/{len(table)} ops equal")
    for op, e in report.items():
        ex = e.get("comparison", {}).get("examples") or []
        if ex:
            print(f"\n{op} {json.dumps(e['params']) if e['params'] else ''}:")
            for x in ex:
                print(f"  - {x[:400]}")
    (a.work_dir / "compat_report.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    (a.work_dir / "compat_table.md").write_text(text + "\n")
    print(f"\nreport: {a.work_dir / 'compat_report.json'}")
    return 0 if n_eq == len(table) else 1


if __name__ == "__main__":
    sys.exit(main())
