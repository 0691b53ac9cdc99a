#!/usr/bin/env python
"""Same-run A/B of the Ray executor: one job (ray_local, the text benchmark) on two source trees,
alternating, each run sampled by ``timeline.py`` (wall and CPU per phase and process kind).

  git worktree add --detach /tmp/ray-base <commit>      # the base tree
  python benchmarks/ray/ab.py --base /tmp/ray-base --new /tmp/ray-new --num_docs 50000 --rounds 2

A tree is put first on ``PYTHONPATH`` (before the editable install); ``--new .`` runs the working tree.
The first run of a fresh tree compiles its numba kernels (cached per file path): prime each tree once
(``--num_docs 500 --rounds 1``). Prints each run's table and whether the outputs are byte-identical.
"""
from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import timeline as tl  # noqa: E402

bl = tl.bl


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--order", default="base,new")
    ap.add_argument("--extra", default="{}", help="JSON merged into the recipe")
    a = ap.parse_args(argv)
    trees = {"base": os.path.abspath(a.base), "new": os.path.abspath(a.new)}
    corpus = tl.corpus_path(tl.DEFAULT_OUT, a.num_docs, 42)
    if not corpus.exists():
        corpus = tl.make_corpus(a.num_docs, 42)
    recipe, _ = bl.filter_recipe(bl.load_yaml(tl.HERE.parent / "text_pipeline" / "recipe.yaml"), bl.list_our_ops())
    kinds = a.order.split(",")
    report = []
    for r in range(a.rounds):
        for kind in kinds:
            out = tl.WORK / f"ab_{kind}"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            env = dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONUNBUFFERED="1", PYTHONPATH=trees[kind])
            env.pop("RAY_ADDRESS", None)
            rec = dict(recipe, dataset_path=str(corpus), export_path=str(out / "result.jsonl"),
                       ds_cache_dir=str(out / "hf"), np=2, executor_type="ray", **json.loads(a.extra))
            bl.dump_yaml(rec, out / "recipe.yaml")
            res = tl.sample_run(bl.ours_cmd() + ["--config", str(out / "recipe.yaml")], out / "run.log", env, 1800)
            res.update(name=kind, round=r)
            tl.print_run(f"{kind} round {r}", res)
            report.append(res)
        x, y = tl.WORK / f"ab_{kinds[0]}", tl.WORK / f"ab_{kinds[1]}"
        files = sorted(f for f in os.listdir(x) if f.endswith(".jsonl"))
        same = files == sorted(f for f in os.listdir(y) if f.endswith(".jsonl")) and all(
            filecmp.cmp(x / f, y / f, shallow=False) for f in files)
        print(f"round {r}: outputs {'byte-identical' if same else 'DIFFERENT'} ({', '.join(files)})", flush=True)
    (tl.WORK / "ab.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
