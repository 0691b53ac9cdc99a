#!/usr/bin/env python
"""Where one ``dj-process`` run's time goes, phase by phase, in its own process:

  python benchmarks/peers/phases.py --config RECIPE.yaml      # from the repository (or a worktree's) root

Wraps the run's steps (recipe parse, backend start = ``datasets`` import, op build = numba kernels,
load, each dedup's ``hash_table`` and ``process``, export) and prints, per phase, wall seconds,
CPU seconds of the process (all threads; ``getrusage``) and the RSS / anonymous RSS at its end
(``/proc/self/status``). "interpreter + imports" is from the process's start (as the kernel has it)
to the first phase; "exit" is the rest, up to the process's end. The run itself is
``data_juicer.cli.process.main``, as ``dj-process`` runs it (same teardown).
"""
from __future__ import annotations

import os
import resource
import sys
import time

T0 = time.time()
ROWS: list = []


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _mem() -> tuple:
    vals = {}
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "VmHWM"):
                vals[k] = int(v.split()[0]) // 1024
    return vals.get("VmRSS", 0), vals.get("RssAnon", 0), vals.get("VmHWM", 0)


def _start_time() -> float:
    with open("/proc/self/stat", encoding="utf-8") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/stat", encoding="utf-8") as f:
        btime = next(int(line.split()[1]) for line in f if line.startswith("btime"))
    return btime + ticks / os.sysconf("SC_CLK_TCK")


_last = {"t": _start_time(), "cpu": 0.0}


def mark(name: str) -> None:
    t, c = time.time(), _cpu()
    ROWS.append((name, t - _last["t"], c - _last["cpu"]) + _mem())
    _last.update(t=t, cpu=c)


def wrap(obj, attr: str, label: str) -> None:
    fn = getattr(obj, attr)

    def inner(*a, **k):
        mark(f"(before {label})")
        try:
            return fn(*a, **k)
        finally:
            mark(label)

    setattr(obj, attr, inner)


def report() -> None:
    mark("exit (summary, teardown up to here)")
    print(f"{'phase':<44} {'wall s':>7} {'CPU s':>7} {'RSS MB':>7} {'anon MB':>8} {'HWM MB':>7}", file=sys.stderr)
    tw = tc = 0.0
    for name, w, c, rss, anon, hwm in ROWS:
        if name.startswith("(before") and w < 0.005 and c < 0.005:
            continue
        tw, tc = tw + w, tc + c
        print(f"{name:<44} {w:7.2f} {c:7.2f} {rss:7d} {anon:8d} {hwm:7d}", file=sys.stderr)
    print(f"{'total':<44} {tw:7.2f} {tc:7.2f}", file=sys.stderr)
    sys.stderr.flush()


def main() -> int:
    mark("interpreter start")
    sys.path.insert(0, os.getcwd())  # the data_juicer of the folder it runs in (a git worktree for an A/B)
    from data_juicer.cli import process as cli

    mark("import data_juicer.cli.process")
    from data_juicer.config import recipe as recipe_mod

    wrap(recipe_mod, "load_recipe", "recipe parse (load_recipe)")
    from data_juicer.core import executor as ex
    from data_juicer.core.backends import hf

    wrap(hf.HFBackend, "start", "backend start (imports datasets)")
    wrap(ex.Executor, "build_ops", "op build (numba kernels)")
    wrap(hf.HFBackend, "load", "load (JSONL -> Arrow)")
    wrap(hf.HFBackend, "export", "export")
    from data_juicer.ops.deduplicator import document_minhash_deduplicator as mh

    wrap(mh.DocumentMinhashDeduplicator, "hash_table", "hashing (hash_table)")
    wrap(mh.DocumentMinhashDeduplicator, "process", "banding + union-find (process)")
    import atexit

    atexit.register(report)
    sys.argv = ["dj-process"] + sys.argv[1:]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
