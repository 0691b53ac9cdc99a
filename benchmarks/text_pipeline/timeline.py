#!/usr/bin/env python
"""Timeline of one ``dj-process`` run: which processes use the CPU when, beside the run's log lines.

  python benchmarks/text_pipeline/run.py --num_docs 50000       # writes work/ours/recipe.yaml
  python benchmarks/text_pipeline/timeline.py benchmarks/text_pipeline/work/ours/recipe.yaml [--tree PATH]

Samples the user + system seconds of the driver and of every descendant every ``--interval`` s (psutil),
and stamps each log line of the run with the second it arrived. Prints, per phase between two log
lines, its wall seconds, the CPU seconds of the driver and of the other processes, and the cores used on
average (CPU s / wall s): a phase at ~1.0 with the workers idle is serial. A fresh export folder and
``ds_cache_dir`` are used (no reuse of cached passes).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import benchlib as bl  # noqa: E402

LAUNCH = ("import sys; tree = sys.argv[1]; "
          "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
          "sys.path.insert(0, tree); sys.argv = ['dj-process'] + sys.argv[2:]; "
          "from data_juicer.cli.process import main; sys.exit(main())")


def main(argv=None):
    import psutil

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recipe", type=Path)
    ap.add_argument("--tree", default=str(HERE.parent.parent), help="source tree to import data_juicer from")
    ap.add_argument("--work", type=Path, default=Path("/tmp/dj_timeline"))
    ap.add_argument("--interval", type=float, default=0.1)
    a = ap.parse_args(argv)
    shutil.rmtree(a.work, ignore_errors=True)
    a.work.mkdir(parents=True)
    text = a.recipe.read_text()
    text = re.sub(r"(?m)^export_path:.*$", f"export_path: {a.work / 'result.jsonl'}", text)
    text = re.sub(r"(?m)^ds_cache_dir:.*$", "", text) + f"\nds_cache_dir: {a.work / 'hf_cache'}\n"
    recipe = a.work / "recipe.yaml"
    recipe.write_text(text)
    t0 = time.time()
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, os.path.abspath(a.tree), "--config", str(recipe)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=bl.offline_env(), cwd=a.work,
                            text=True, bufsize=1)
    samples: list = []  # (t, driver cpu, others cpu)
    seen: dict = {}
    stop = threading.Event()

    def poll():
        root = psutil.Process(proc.pid)
        while not stop.is_set():
            try:
                procs = [root] + root.children(recursive=True)
            except psutil.Error:
                break
            for p in procs:
                try:
                    c = p.cpu_times()
                    seen[(p.pid, p.create_time())] = (p.pid == proc.pid, c.user + c.system)
                except psutil.Error:
                    pass
            drv = sum(v for d, v in seen.values() if d)
            samples.append((time.time() - t0, drv, sum(v for d, v in seen.values() if not d),
                            len(procs)))
            stop.wait(a.interval)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    lines = []
    for line in proc.stdout:
        lines.append((time.time() - t0, line.rstrip()))
    proc.wait()
    stop.set()
    th.join()
    end = time.time() - t0
    (a.work / "run.log").write_text("\n".join(f"{t:7.2f} {s}" for t, s in lines) + "\n")
    (a.work / "samples.json").write_text(json.dumps(samples))

    def cpu_at(t):
        best = (0.0, 0.0, 0.0, 1)
        for s in samples:
            if s[0] > t:
                break
            best = s
        return best

    marks = [(0.0, "start (interpreter, imports)")]
    for t, s in lines:
        m = re.search(r"\| (?:INFO|WARNING)\s*\| (.*)$", s)
        if m:
            marks.append((t, m.group(1)[:90]))
    marks.append((end, "exit"))
    print(f"rc {proc.returncode}; wall {end:.2f} s; processes sampled {len(seen)}")
    print(f"{'from':>7} {'wall':>6} {'drv':>6} {'wrk':>6} {'cores':>5}  phase (ends with the log line)")
    tot_d = tot_w = 0.0
    for (ta, _), (tb, label) in zip(marks, marks[1:]):
        ca, cb = cpu_at(ta), cpu_at(tb)
        d, w = cb[1] - ca[1], cb[2] - ca[2]
        tot_d, tot_w = tot_d + d, tot_w + w
        wall = tb - ta
        if wall < 0.05:
            continue
        print(f"{ta:7.2f} {wall:6.2f} {d:6.2f} {w:6.2f} {(d + w) / max(wall, 1e-9):5.2f}  {label}")
    last = samples[-1] if samples else (0, 0, 0, 0)
    print(f"total CPU s: driver {last[1]:.2f}, other processes {last[2]:.2f}; mean cores {(last[1] + last[2]) / end:.2f}")
    shutil.rmtree(a.work / "hf_cache", ignore_errors=True)


if __name__ == "__main__":
    main()
