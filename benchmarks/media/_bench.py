"""Shared parts of the media benchmarks (image_run.py, video_run.py): run one recipe with ours or
Data-Juicer's ``dj-process`` as a measured subprocess and report wall time, CPU seconds, peak PSS
of the process tree and the file descriptors the process still holds after the run.

``run_one`` wraps the CLI's ``main()`` in a few lines of Python (``WRAP``) that count
``/proc/self/fd`` before and after the run (after a ``gc.collect()``) and print
``OPEN_FDS_LEFT <n>``: descriptors opened by the run and never closed (Data-Juicer leaks PyAV
containers and image files). CPU seconds are the user + system time of the whole process tree,
which on a loaded machine says more than the wall time: the larger of ``RUSAGE_CHILDREN`` around
the run (counts only the processes that were waited for) and the sum, over every process seen in
the tree, of its own user + system time last read from ``/proc`` (polled every 0.1 s by
``TreeCpu``, which also gives ``cpu_per_process_s``: the CPU seconds of each process that did
work, so a run that never forked its np workers shows one entry). The second is needed for Data-Juicer: its worker processes are not waited for
when the run ends, so ``RUSAGE_CHILDREN`` alone missed most of its CPU time (53 CPU s reported
for a run whose optical flow alone costs 60).
"""
from __future__ import annotations

import os
import resource
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
for p in (str(HERE.parent), str(HERE.parent.parent)):
    if p not in sys.path:
        sys.path.insert(0, p)

import benchlib

WRAP = ("import gc, importlib, os, sys; before = len(os.listdir('/proc/self/fd')); "
        "sys.argv = ['dj-process'] + sys.argv[2:]; rc = importlib.import_module('{mod}').main(); gc.collect(); "
        "print('OPEN_FDS_LEFT', len(os.listdir('/proc/self/fd')) - before, flush=True); "
        "sys.exit(0 if rc is None else rc)")
OURS_MODULE = "data_juicer.cli.process"
DJ_MODULE = "data_juicer.tools.process_data"


def children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class TreeCpu:
    """Polls the CPU time of every descendant of this process while a run goes on (a thread).

    ``total()`` is the sum over each process seen (keyed by pid and start time) of its own user
    + system seconds at the last poll, so a process is undercounted by at most one interval."""

    def __init__(self, interval: float = 0.1):
        import psutil

        self._psutil, self.interval = psutil, interval
        self.seen: dict = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _poll(self):
        ps = self._psutil
        try:
            procs = ps.Process().children(recursive=True)
        except ps.Error:
            return
        for p in procs:
            try:
                with p.oneshot():
                    t = p.cpu_times()
                    self.seen[(p.pid, p.create_time())] = t.user + t.system
            except ps.Error:
                continue

    def _loop(self):
        while not self._stop.wait(self.interval):
            self._poll()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def total(self) -> float:
        return sum(self.seen.values())

    def busy(self, min_s: float = 0.5) -> list[float]:
        """The CPU seconds of each process of the tree that used at least ``min_s``, largest first: how
        many processes did the work (one entry at ``np: 2`` means the run did not fork)."""
        return sorted((round(v, 1) for v in self.seen.values() if v >= min_s), reverse=True)


def run_one(label: str, python: str, module: str, cfg: dict, work: Path, env: dict,
            timeout: float | None = None) -> dict:
    """Run recipe ``cfg`` (written to ``work/recipe_<label>.yaml``) with ``python -c WRAP``.

    Returns benchlib.run_measured's dict plus ``label``, ``rows_out`` (lines of the export),
    ``fds_left`` (None when the run did not get to print it), ``cpu_s`` and its two readings
    ``cpu_rusage_s`` / ``cpu_polled_s`` (see the module docstring)."""
    path = work / f"recipe_{label}.yaml"
    benchlib.dump_yaml(cfg, path)
    argv = [python, "-c", WRAP.replace("{mod}", module), "--", "--config", str(path)]
    cpu0 = children_cpu_s()
    with TreeCpu() as tree:
        res = benchlib.run_measured(argv, work / f"log_{label}.txt", env=env, cwd=work, timeout=timeout)
    res["cpu_rusage_s"] = children_cpu_s() - cpu0
    res["cpu_polled_s"] = tree.total()
    res["cpu_per_process_s"] = tree.busy()
    res["cpu_s"] = max(res["cpu_rusage_s"], res["cpu_polled_s"])
    n = benchlib.count_lines(cfg["export_path"]) if os.path.exists(cfg["export_path"]) else 0
    fds = None
    with open(res["log"], encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("OPEN_FDS_LEFT"):
                fds = int(line.split()[1])
    res.update(label=label, rows_out=n, fds_left=fds)
    return res


def ours_env() -> dict:
    """Our run's environment: the repository on PYTHONPATH (the run's cwd is the work folder, and an
    editable install may point at another checkout)."""
    pp = os.pathsep.join(p for p in (str(benchlib.REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return benchlib.offline_env({"OMP_NUM_THREADS": "1", "PYTHONPATH": pp})


def dj_env() -> dict:
    return benchlib.offline_env({"OMP_NUM_THREADS": "1"}, reference=True)


def dj_python(spec: str) -> str:
    return benchlib.dj_paths(spec)[0]


def speedup_line(results: list[dict], unit: str, n: int) -> str:
    """'ours 4.1x Data-Juicer's throughput (wall), 3.9x (CPU s); peak PSS 0.21x' for two runs."""
    ours, dj = results
    return (f"speed-up (wall): {dj['wall_s'] / ours['wall_s']:.2f}x; CPU seconds: {dj['cpu_s'] / max(ours['cpu_s'], 1e-9):.2f}x"
            f" fewer; peak PSS: {ours['peak_pss_tree_mb']:.0f} MB vs {dj['peak_pss_tree_mb']:.0f} MB "
            f"({n} {unit})")
