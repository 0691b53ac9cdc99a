#!/usr/bin/env python
"""Same-run A/B of whole ``dj-process`` runs from frozen source trees (``git worktree``s), alternated.

  git worktree add /tmp/tp-base <commit>; git worktree add /tmp/tp-new HEAD
  python benchmarks/text_pipeline/run.py --num_docs 10000     # writes work/ours/recipe.yaml (a template)
  python benchmarks/text_pipeline/ab_trees.py benchmarks/text_pipeline/work/ours/recipe.yaml 2 \
      base=/tmp/tp-base new=/tmp/tp-new

Each run gets a fresh output folder (and ``ds_cache_dir``) under ``--work`` and imports ``data_juicer``
from its tree (the editable install's finder is taken out of ``sys.meta_path`` first). Prints CPU seconds
of the process tree (``RUSAGE_CHILDREN``), wall, peak PSS / anonymous memory of the tree per run, then
min/median per tree and whether the first two trees' ``result.jsonl`` / ``result_stats.jsonl`` are
byte-identical. On a loaded machine compare CPU seconds, and the minimum over rounds.
"""
from __future__ import annotations

import argparse
import filecmp
import os
import re
import resource
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import benchlib as bl  # noqa: E402

LAUNCH = ("import sys; tree = sys.argv[1]; "
          "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
          "sys.path.insert(0, tree); sys.argv = ['dj-process'] + sys.argv[2:]; import data_juicer; "
          "assert data_juicer.__file__.startswith(tree), data_juicer.__file__; "
          "from data_juicer.cli.process import main; sys.exit(main())")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recipe", type=Path)
    ap.add_argument("rounds", type=int)
    ap.add_argument("trees", nargs="+", help="name=path of a source tree")
    ap.add_argument("--work", type=Path, default=Path("/tmp/dj_ab_trees"))
    a = ap.parse_args(argv)
    variants = [t.split("=", 1) for t in a.trees]
    text = a.recipe.read_text()
    res: dict = {n: [] for n, _ in variants}
    for _ in range(a.rounds):
        for name, tree in variants:
            out = a.work / name
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            r = re.sub(r"(?m)^export_path:.*$", f"export_path: {out / 'result.jsonl'}", text)
            r = re.sub(r"(?m)^ds_cache_dir:.*$", "", r) + f"\nds_cache_dir: {out / 'hf_cache'}\n"
            recipe = out / "recipe.yaml"
            recipe.write_text(r)
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            argv = [sys.executable, "-c", LAUNCH, os.path.abspath(tree), "--config", str(recipe)]
            m = bl.run_measured(argv, out / "run.log", env=bl.offline_env(), cwd=out, timeout=3600)
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime
            res[name].append((cpu, m["wall_s"], m["peak_pss_tree_mb"], m.get("peak_anon_tree_mb", 0)))
            for f in ("result.jsonl", "result_stats.jsonl"):
                if (out / f).exists():
                    shutil.copy(out / f, a.work / f"{name}.{f}")
            shutil.rmtree(out / "hf_cache", ignore_errors=True)
            pss, anon = res[name][-1][2:]
            print(f"{name}: rc {m['rc']} cpu {cpu:.2f} s, wall {m['wall_s']:.1f} s, peak PSS {pss:.0f} MB, "
                  f"anon {anon:.0f} MB (load {os.getloadavg()[0]:.1f})", flush=True)
    for name, v in res.items():
        cpus = sorted(x[0] for x in v)
        peak = max(x[2] for x in v)
        print(f"{name}: cpu min {cpus[0]:.2f} median {cpus[len(cpus) // 2]:.2f}; peak PSS max {peak:.0f} MB")
    if len(variants) >= 2:
        x, y = variants[0][0], variants[1][0]
        same = [filecmp.cmp(a.work / f"{x}.{f}", a.work / f"{y}.{f}", shallow=False)
                for f in ("result.jsonl", "result_stats.jsonl")]
        word = ["identical" if ok else "DIFFERENT" for ok in same]
        print(f"{x} vs {y}: result {word[0]}, stats {word[1]}")


if __name__ == "__main__":
    main()
