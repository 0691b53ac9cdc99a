#!/usr/bin/env python
"""Where a run's memory goes: run a command and sample each process of its tree.

  python benchmarks/peers/mem_timeline.py [--interval 0.2] [--json OUT.json] -- dj-process --config recipe.yaml

Every ``interval`` seconds, for each process of the tree, ``/proc/<pid>/smaps_rollup``: PSS,
anonymous PSS, RSS, private dirty (what the process wrote itself, or copied on write after a fork),
shared dirty (a forking parent's heap, still shared) and shared clean (libraries, memory-mapped
files such as the datasets' Arrow tables); and the CPU seconds of all processes seen so far.
Prints the peak of the tree's PSS with its per-process split, and a line whenever the tree's PSS
moves by 20 MB or the process count changes (time as UTC, to line up with the run's log, which
goes to ``--log``). With ``--maps``, each sample also reads ``/proc/<pid>/smaps`` and the peak is split
per mapping (file name, or ``[anon]`` / ``[heap]``), summed over the tree: the largest 12 are printed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import psutil

FIELDS = (("pss", "Pss"), ("anon", "Pss_Anon"), ("rss", "Rss"), ("priv_dirty", "Private_Dirty"),
          ("shared_dirty", "Shared_Dirty"), ("shared_clean", "Shared_Clean"))


def rollup(pid: int) -> dict:
    values = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[0].endswith(":"):
                    values[parts[0][:-1]] = int(parts[1]) / 1024
    except OSError:
        return {}
    return {k: round(values.get(name, 0.0)) for k, name in FIELDS}


def by_mapping(pid: int) -> dict:
    """PSS in MB per mapping name of one process (anonymous regions as ``[anon]``)."""
    out: dict = {}
    name = "[anon]"
    try:
        with open(f"/proc/{pid}/smaps", encoding="utf-8") as f:
            for line in f:
                head = line.split(maxsplit=5)
                if head and "-" in head[0] and not head[0].endswith(":"):
                    name = head[5].strip() if len(head) == 6 else "[anon]"
                elif head and head[0] == "Pss:":
                    out[name] = out.get(name, 0.0) + int(head[1]) / 1024
    except OSError:
        return {}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--json", default=None, help="write every sample here")
    ap.add_argument("--log", default="mem_timeline.log", help="the command's stdout and stderr")
    ap.add_argument("--maps", action="store_true", help="also split the peak per mapping (reads smaps)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("give the command to run after --")
    t0 = time.time()
    with open(a.log, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        root = psutil.Process(proc.pid)
        samples, cpu = [], {}
        while proc.poll() is None:
            try:
                procs = [root] + root.children(recursive=True)
            except psutil.Error:
                procs = []
            snap = []
            for q in procs:
                r = rollup(q.pid)
                try:
                    t = q.cpu_times()
                    cpu[(q.pid, q.create_time())] = t.user + t.system
                except psutil.Error:
                    pass
                if r:
                    snap.append(dict(pid=q.pid, **r))
                    if a.maps:
                        snap[-1]["maps"] = by_mapping(q.pid)
            samples.append({"t": round(time.time() - t0, 2), "pss": sum(s["pss"] for s in snap),
                            "cpu": round(sum(cpu.values()), 2), "procs": snap})
            time.sleep(a.interval)
        rc = proc.wait()
    print(f"rc {rc}, wall {time.time() - t0:.1f} s, CPU {sum(cpu.values()):.1f} s (sampled), log {a.log}")
    if samples:
        peak = max(samples, key=lambda s: s["pss"])
        print(f"peak PSS {peak['pss']} MB at {peak['t']} s:",
              json.dumps([{k: v for k, v in p.items() if k != "maps"} for p in peak["procs"]]))
        if a.maps:
            total: dict = {}
            for p in peak["procs"]:
                for name, mb in p.get("maps", {}).items():
                    total[name] = total.get(name, 0.0) + mb
            top = sorted(total.items(), key=lambda kv: -kv[1])[:12]
            print("  per mapping:", ", ".join(f"{os.path.basename(k) or k} {v:.1f}" for k, v in top))
    last = None
    for s in samples:
        key = (s["pss"] // 20, len(s["procs"]))
        if key != last:
            when = time.strftime("%H:%M:%S", time.gmtime(t0 + s["t"]))
            split = " ".join(f"{p['pid']}:{p['pss']}/{p['anon']}a/{p['priv_dirty']}pd" for p in s["procs"])
            print(f"{when} {s['t']:7.1f}s cpu {s['cpu']:6.1f} pss {s['pss']:5} | {split}")
            last = key
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(samples, f)
    return rc


if __name__ == "__main__":
    sys.exit(main())
