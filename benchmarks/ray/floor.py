"""The floor of the Ray path on this machine: what starting (or joining) Ray, running 2 trivial tasks that
import numpy + pyarrow, and shutting down costs with no data_juicer work at all.

    python benchmarks/ray/floor.py                 # 3 rounds of every mode, ABAB order
    python benchmarks/ray/floor.py --rounds 5 --modes own_lean,join

Modes (each a fresh ``python`` driver subprocess; wall and CPU s of every process of the run, Ray's
daemons and workers included, sampled as ``run.py`` does):

- ``python``: the driver alone, ``import numpy, pyarrow`` (the interpreter's own share);
- ``python_dj``: the driver alone, ``import data_juicer.core.backends.ray`` (what ``own_lean`` imports on
  top of Ray; subtract it to compare ``own_lean`` with ``own_public`` like for like);
- ``own_public``: ``ray.init()`` (public defaults: dashboard, monitor, log monitor), 2 tasks, shutdown;
- ``own_nodash``: ``ray.init(include_dashboard=False, log_to_driver=False)``, 2 tasks, shutdown;
- ``own_lean``: the job's own start (``data_juicer.core.backends.ray._start_local_ray``: no dashboard,
  no autoscaler monitor, no log monitor), 2 tasks, shutdown;
- ``join``: ``ray.init(address=...)`` on a running local cluster (``ray.cluster_utils.Cluster``, 1 node,
  2 CPUs, started before the round and not counted until the driver starts), 2 tasks, disconnect.

Compare the CPU s / wall s with 10 % of the default executor's run (the budget for all of Ray's overhead
at 90 % throughput).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import run_sampled  # noqa: E402

TASKS = """
import ray
@ray.remote(num_cpus=1)
def work(i):
    import numpy as np, pyarrow as pa
    return pa.array(np.arange(1000) + i).to_numpy().sum()
print(sum(ray.get([work.remote(i) for i in range(2)])))
"""

DRIVERS = {
    "python": "import numpy, pyarrow\nprint(0)\n",
    "python_dj": "import data_juicer.core.backends.ray\nprint(0)\n",
    "own_public": "import ray\nray.init()\n" + TASKS + "ray.shutdown()\n",
    "own_nodash": "import ray, logging\nray.init(include_dashboard=False, log_to_driver=False, "
                  "logging_level=logging.WARNING)\n" + TASKS + "ray.shutdown()\n",
    "own_lean": "import ray, logging\nfrom data_juicer.core.backends.ray import _start_local_ray\n"
                "node = _start_local_ray(dict(include_dashboard=False, log_to_driver=False, "
                "logging_level=logging.WARNING))\n" + TASKS + "ray.shutdown()\nnode and node.kill_all_processes("
                "check_alive=False, allow_graceful=True, wait=True)\n",
    "join": "import ray, logging, os\nray.init(address=os.environ['FLOOR_RAY_ADDRESS'], log_to_driver=False, "
            "logging_level=logging.WARNING)\n" + TASKS + "ray.shutdown()\n",
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default="python,python_dj,own_public,own_nodash,own_lean,join")
    ap.add_argument("--json", default=str(HERE / "work" / "floor.json"))
    args = ap.parse_args(argv)
    modes = args.modes.split(",")
    cluster = None
    env = dict(os.environ)
    if "join" in modes:
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args=dict(num_cpus=2, include_dashboard=False))
        env["FLOOR_RAY_ADDRESS"] = cluster.address
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="rayfloor_"))
    try:
        for r in range(args.rounds):
            for mode in (modes if r % 2 == 0 else modes[::-1]):  # ABAB..., then BA: no mode always first
                script = tmp / f"{mode}.py"
                script.write_text(DRIVERS[mode])
                res = run_sampled([sys.executable, str(script)], tmp / f"{mode}_{r}.log", env, 300)
                with open(res["log"], encoding="utf-8") as f:
                    tail = f.read().strip().splitlines()[-1:] or [""]
                load = os.getloadavg()[0]
                rows.append(dict(mode=mode, round=r, rc=res["rc"], wall_s=res["wall_s"], cpu_s=res["cpu_s"],
                                 load=round(load, 2), out=tail[0][-40:]))
                print(json.dumps(rows[-1]), flush=True)
    finally:
        if cluster is not None:
            cluster.shutdown()
    print("\nmode          wall s (median)  CPU s (median)  runs")
    for mode in modes:
        mine = [x for x in rows if x["mode"] == mode and x["rc"] == 0]
        if not mine:
            print(f"{mode:13} failed")
            continue
        w = sorted(x["wall_s"] for x in mine)[len(mine) // 2]
        c = sorted(x["cpu_s"] for x in mine)[len(mine) // 2]
        print(f"{mode:13} {w:15.2f} {c:15.1f}  {len(mine)}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
