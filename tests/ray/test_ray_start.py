"""The Ray backend's start-up: Ray starts in a thread while the driver builds its ops, its errors
surface in the step that needs Ray, and the worker warm-up builds and runs the recipe's text ops."""
import threading

import pytest

from data_juicer.core.backends import ray as rb
from data_juicer.ops.build import resolve_entry


def _backend(start_ray):
    b = rb.RayBackend.__new__(rb.RayBackend)
    b._own_ray, b._num_cpus = False, 1
    b._start_ray = start_ray
    return b


def test_start_returns_before_ray_is_up_and_ready_waits():
    gate, ran = threading.Event(), []

    def slow_start():
        gate.wait(5)
        ran.append(threading.current_thread().name)

    b = _backend(slow_start)
    b.start()
    assert ran == []  # start() did not wait for Ray
    gate.set()
    b._ready()
    assert ran == ["dj-ray-start"]
    starter = b._starter
    assert starter.is_alive()  # the thread that started Ray's daemons lives until stop (they die with it)
    b.stop()
    assert not starter.is_alive()


def test_start_error_raised_where_ray_is_needed():
    def broken():
        raise ConnectionError("no Ray cluster at 10.0.0.9:6379")

    b = _backend(broken)
    b.start()
    with pytest.raises(ConnectionError, match="10.0.0.9:6379"):
        b.workers
    b.stop()  # the error was raised already: stop does not raise it again


def test_warm_up_builds_and_runs_only_text_ops_without_models():
    from data_juicer.ops.base import OP

    names = ["whitespace_normalization_mapper", "words_num_filter", "document_deduplicator"]
    entries = [resolve_entry({n: {}}, {}, f"process[{i}]") for i, n in enumerate(names)]
    assert all(rb._warmable(e.cls) for e in entries)

    class ModelOp(OP):
        uses_model = True

    assert not rb._warmable(ModelOp)
    out = rb._warm_up_worker(entries, "text", "/tmp")
    assert out.column("n").to_pylist() == [3]


@pytest.mark.slow
def test_local_ray_without_monitors_and_stop_leaves_nothing(tmp_path):
    """The job's own local Ray: no autoscaler monitor, no log monitor; stop kills every process."""
    import os
    import subprocess
    import sys

    script = tmp_path / "probe.py"
    script.write_text(
        "import logging, psutil, ray\n"
        "from data_juicer.core.backends.ray import _start_local_ray\n"
        "node = _start_local_ray(dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING))\n"
        "assert node is not None\n"
        "f = ray.remote(lambda x: 2 * x)\n"
        "assert ray.get([f.remote(i) for i in range(3)]) == [0, 2, 4]\n"
        "cmds = [' '.join(p.cmdline()) for p in psutil.Process().children(recursive=True)]\n"
        "print('gcs', sum('gcs_server' in c for c in cmds), 'raylet', sum('/raylet ' in c for c in cmds))\n"
        "print('log_monitor', sum('log_monitor' in c for c in cmds), 'monitor', sum('monitor.py' in c for c in cmds))\n"
        "ray.shutdown(); node.kill_all_processes(check_alive=False, allow_graceful=True, wait=True)\n"
        "print('left', [p.pid for p in psutil.Process().children(recursive=True) if p.status() != 'zombie'])\n")
    env = dict(os.environ, RAY_AUTH_MODE="disabled")
    env.pop("RAY_ADDRESS", None)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "gcs 1 raylet 1" in out.stdout
    assert "log_monitor 0 monitor 0" in out.stdout
    assert "left []" in out.stdout


@pytest.mark.slow
def test_own_local_ray_sends_no_inherited_dj_env(tmp_path):
    """DJ_* variables set before the job started its own Ray are in every worker already: the passes'
    runtime_env leaves them out (env_vars would make Ray start fresh workers), and the prestarted
    workers see them; the record goes with stop."""
    import os
    import subprocess
    import sys

    script = tmp_path / "probe.py"
    script.write_text(
        "import os, types, ray\n"
        "from data_juicer.core.backends import ray as rb\n"
        "from data_juicer.core.ray_dataset import runtime_env_for\n"
        "b = rb.RayBackend.__new__(rb.RayBackend)\n"
        "b._own_ray, b._node, b._num_cpus = False, None, 1\n"
        "b.recipe = types.SimpleNamespace(ray_address=None, ops=[])\n"
        "b._start_ray()\n"
        "print('env', runtime_env_for())\n"
        "f = ray.remote(lambda: os.environ.get('DJ_PROBE_INHERITED'))\n"
        "print('seen', ray.get(f.remote()))\n"
        "b.stop()\n"
        "print('after stop', runtime_env_for())\n")
    env = dict(os.environ, RAY_AUTH_MODE="disabled", DJ_PROBE_INHERITED="yes")
    env.pop("RAY_ADDRESS", None)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "env None" in out.stdout
    assert "seen yes" in out.stdout
    assert "'DJ_PROBE_INHERITED': 'yes'" in out.stdout.split("after stop", 1)[1]
