"""Ctrl-C: dj-process stops with one line saying where to resume (exit 130) and no traceback; with
``use_checkpoint`` the same command then resumes after the last finished op."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from tests.badinput.conftest import REPO

SLOW_FN = '''
import os
import time


def process(sample):
    marker = os.environ.get("DJ_TEST_MARKER")
    if marker:  # tell the test that the rows are being processed, then take our time
        open(marker, "a").close()
        time.sleep(float(os.environ.get("DJ_TEST_SLEEP", "0.2")))
    return sample
'''


def _setup(tmp_path, n_rows=200, np_=1, **globals_):
    data = tmp_path / "data.jsonl"
    with open(data, "w") as f:
        for i in range(n_rows):
            f.write(json.dumps({"id": i, "text": f"row number {i} " + "x" * (i % 7)}) + "\n")
    fn = tmp_path / "slow.py"
    fn.write_text(SLOW_FN)
    cfg = {"project_name": "t", "np": np_, "dataset_path": str(data),
           "export_path": str(tmp_path / "out" / "result.jsonl"),
           "process": [{"document_deduplicator": {}},  # a dataset-level op: a checkpoint is saved after it
                       {"python_file_mapper": {"file_path": str(fn), "function_name": "process"}}]}
    cfg.update(globals_)
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(cfg))
    return str(recipe)


def _start(recipe, marker, **popen):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
               DJ_TEST_MARKER=str(marker))
    return subprocess.Popen([sys.executable, "-m", "data_juicer.cli.process", "--config", recipe],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO, **popen)


def _wait_for(marker, proc, timeout=240):
    t = time.time()
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.time() - t < timeout, "the run never reached the slow op"
        time.sleep(0.2)


def _interrupt_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("dj-process: interrupted (Ctrl-C); ")]
    assert len(lines) == 1, err
    return lines[0]


def test_ctrl_c_stops_cleanly_and_says_where_to_resume(tmp_path):
    recipe = _setup(tmp_path, use_checkpoint=True)
    marker = tmp_path / "started"
    proc = _start(recipe, marker)
    _wait_for(marker, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in out + err, err
    line = _interrupt_line(err)
    ckpt = tmp_path / "out" / "ckpt"
    assert f"resume from the last checkpoint saved in {ckpt}" in line, line
    job = line.split("(job folder: ")[1].rstrip(")")
    assert os.path.isdir(job)
    assert not (tmp_path / "out" / "result.jsonl").exists()
    assert not [n for n in os.listdir(tmp_path / "out") if ".tmp-" in n or ".parts-" in n]
    # the same command again resumes after the dedup (its checkpoint) and finishes
    env = dict(os.environ, PYTHONPATH=REPO)
    done = subprocess.run([sys.executable, "-m", "data_juicer.cli.process", "--config", recipe], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "resuming from the checkpoint" in done.stderr and "1 of 2 ops already applied" in done.stderr
    with open(tmp_path / "out" / "result.jsonl") as f:
        assert len(f.readlines()) == 200


def test_ctrl_c_without_checkpoint_says_the_run_starts_over(tmp_path):
    recipe = _setup(tmp_path)
    marker = tmp_path / "started"
    proc = _start(recipe, marker)
    _wait_for(marker, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in out + err, err
    line = _interrupt_line(err)
    assert "nothing was exported; job folder: " in line and "use_checkpoint: true" in line, line


@pytest.mark.skipif(os.cpu_count() < 2, reason="needs 2 CPUs for 2 worker processes")
@pytest.mark.slow  # 4 s; Ctrl-C to the driver stays in the default suite
def test_ctrl_c_to_the_whole_process_group_with_workers(tmp_path):
    # a terminal's Ctrl-C reaches the worker processes too: they stop quietly, the main process reports
    recipe = _setup(tmp_path, n_rows=3000, np_=2)
    marker = tmp_path / "started"
    proc = _start(recipe, marker, start_new_session=True)
    _wait_for(marker, proc)
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in out + err, err
    _interrupt_line(err)


@pytest.mark.slow  # starts its own local Ray in the subprocess (a minute on a busy machine)
def test_ctrl_c_on_ray(tmp_path):
    recipe = _setup(tmp_path, executor_type="ray", use_checkpoint=True)
    marker = tmp_path / "started"  # written by a Ray worker (DJ_* variables reach the workers)
    proc = _start(recipe, marker)
    _wait_for(marker, proc, timeout=400)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 130, err
    assert "Traceback" not in out + err, err
    assert f"resume from the last checkpoint saved in {tmp_path / 'out' / 'ckpt'}" in _interrupt_line(err)
