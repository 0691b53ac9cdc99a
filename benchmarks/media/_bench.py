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
``measured_run``, which also gives ``cpu_per_process_s``: the CPU seconds of each process that did
work, so a run that never forked its np workers shows one entry). The second is needed for Data-Juicer: its worker processes are not waited for
when the run ends, so ``RUSAGE_CHILDREN`` alone missed most of its CPU time (53 CPU s reported
for a run whose optical flow alone costs 60).

The sampling itself runs on the machine's cores beside the measured run, so it is kept cheap:
``measured_run`` reads the tree from the kernel's per-task ``children`` lists and each process's
``/proc`` files, not ``psutil``'s whole-machine scans (``benchlib.run_measured`` + the former
``TreeCpu`` poller took ~0.13 CPU s per wall second, ~2 CPU s of a 15 s run on 2 cores; see
``harness_cpu_s`` in the result).
"""
from __future__ import annotations

import os
import resource
import sys
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


_TICK = os.sysconf("SC_CLK_TCK")


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def tree_pids(root: int) -> list[int]:
    """``root`` and its descendants, from the kernel's ``/proc/<pid>/task/<tid>/children`` lists (a few
    small reads; ``psutil.Process.children(recursive=True)`` scans every process of the machine:
    ~5 ms a call with ~100 processes, which at 30 calls a second took ~0.13 CPU s per second from
    the 2 cores the measured run had)."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            todo += [int(c) for c in _read(f"/proc/{pid}/task/{tid}/children").split()]
    return out


def _cpu_s(pid: int):
    """(start time, user + system seconds) of ``pid`` from ``/proc/<pid>/stat``, or None."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    f = stat[stat.rindex(")") + 2:].split()  # fields from the 3rd (state) on
    return int(f[19]), (int(f[11]) + int(f[12])) / _TICK


def _kb_field(text: str, key: str) -> int:
    i = text.find(key)
    return int(text[i + len(key):].split()[0]) * 1024 if i >= 0 else 0


def measured_run(argv: list[str], log_path, env=None, cwd=None, timeout: float | None = None,
                 interval: float = 0.1, pss_every: float = 1.0) -> dict:
    """Run ``argv`` as ``benchlib.run_measured`` does (same keys: rc, wall_s, peak_rss_tree_mb,
    peak_rss_proc_mb, peak_pss_tree_mb, peak_anon_tree_mb, max_procs, timed_out, log) and also the
    CPU seconds of every process of its tree (``cpu_polled_s``, ``cpu_per_process_s``), from one
    poll loop that reads ``/proc`` directly: the process tree every ``interval`` s, RSS and CPU
    from ``/proc/<pid>/stat``, PSS from ``/proc/<pid>/smaps_rollup`` and anonymous RSS (``RssAnon``
    of ``/proc/<pid>/status``) every ``pss_every`` s and whenever the tree's RSS passes its
    highest so far by 10 % (reading ``smaps_rollup`` walks the page tables: 10-20 ms for a process
    with ``datasets`` and OpenCV loaded). ``children_seen_s``: [first, last] second (from the
    start) at which the run had child processes (its workers), None if it never had one. The harness's own CPU (``harness_cpu_s``) is reported too: it runs on
    the same cores as the measured run."""
    import subprocess
    import time

    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    page = os.sysconf("SC_PAGE_SIZE")
    peak_tree = peak_one = peak_pss = peak_anon = nproc_peak = 0
    seen: dict = {}
    self0 = resource.getrusage(resource.RUSAGE_SELF)
    timed_out, next_pss, rss_high = False, 0.0, 0
    first_kids = last_kids = None
    with open(log_path, "w", encoding="utf-8") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        while proc.poll() is None:
            pids = tree_pids(proc.pid)
            nproc_peak = max(nproc_peak, len(pids))
            if len(pids) > 1:  # the run itself is the root; anything below it is a worker (or helper) process
                now = time.perf_counter() - t0
                first_kids = now if first_kids is None else first_kids
                last_kids = now
            total = pss = anon = 0
            rss_of = {}
            for pid in pids:
                cpu = _cpu_s(pid)
                if cpu is not None:
                    seen[(pid, cpu[0])] = cpu[1]
                statm = _read(f"/proc/{pid}/statm").split()
                rss = int(statm[1]) * page if len(statm) > 1 else 0
                rss_of[pid] = rss
                total += rss
                peak_one = max(peak_one, rss)
            peak_tree = max(peak_tree, total)
            now = time.perf_counter()
            if now >= next_pss or total > rss_high * 1.1:  # PSS: a page-table walk, 10-20 ms a process
                next_pss, rss_high = now + pss_every, max(rss_high, total)
                for pid in rss_of:
                    pss += _kb_field(_read(f"/proc/{pid}/smaps_rollup"), "\nPss:")
                    anon += _kb_field(_read(f"/proc/{pid}/status"), "RssAnon:")
                peak_pss, peak_anon = max(peak_pss, pss), max(peak_anon, anon)
            if timeout and time.perf_counter() - t0 > timeout:
                timed_out = True
                for pid in reversed(pids):
                    try:
                        os.kill(pid, 9)
                    except OSError:
                        pass
                break
            time.sleep(interval)
        rc = proc.wait()
        wall = time.perf_counter() - t0
    self1 = resource.getrusage(resource.RUSAGE_SELF)
    return {"rc": rc, "wall_s": wall, "peak_rss_tree_mb": peak_tree / 2**20, "peak_rss_proc_mb": peak_one / 2**20,
            "peak_pss_tree_mb": peak_pss / 2**20, "peak_anon_tree_mb": peak_anon / 2**20,
            "max_procs": nproc_peak, "timed_out": timed_out, "log": str(log_path),
            "cpu_polled_s": sum(seen.values()),
            "cpu_per_process_s": sorted((round(v, 1) for v in seen.values() if v >= 0.5), reverse=True),
            "children_seen_s": None if first_kids is None else [round(first_kids, 2), round(last_kids, 2)],
            "harness_cpu_s": round(self1.ru_utime + self1.ru_stime - self0.ru_utime - self0.ru_stime, 2)}


def run_one(label: str, python: str, module: str, cfg: dict, work: Path, env: dict,
            timeout: float | None = None) -> dict:
    """Run recipe ``cfg`` (written to ``work/recipe_<label>.yaml``) with ``python -c WRAP``.

    Returns ``measured_run``'s dict plus ``label``, ``rows_out`` (lines of the export),
    ``fds_left`` (None when the run did not get to print it), ``cpu_s`` and its two readings
    ``cpu_rusage_s`` / ``cpu_polled_s`` (see the module docstring)."""
    path = work / f"recipe_{label}.yaml"
    benchlib.dump_yaml(cfg, path)
    argv = [python, "-c", WRAP.replace("{mod}", module), "--", "--config", str(path)]
    cpu0 = children_cpu_s()
    res = measured_run(argv, work / f"log_{label}.txt", env=env, cwd=work, timeout=timeout)
    res["cpu_rusage_s"] = children_cpu_s() - cpu0
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
