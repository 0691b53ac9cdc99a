"""Helpers for the bad-input tests: run dj-process, read what it left, check rows are conserved."""
import json
import os
import subprocess
import sys

import pytest

from tests.core.conftest import executor_type  # noqa: F401  (default, then Ray on the session's local instance)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_lines(path, lines: list) -> str:
    """Write raw lines (bytes or str) as a data file; return its path."""
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(path, "wb") as f:
        for line in lines:
            f.write(line if isinstance(line, bytes) else line.encode("utf-8"))
            f.write(b"\n")
    return str(path)


def job_dir(out_dir) -> str:
    """The job folder of the (only) run under ``out_dir``: the one with a summary, else any."""
    dirs = [os.path.join(out_dir, d) for d in sorted(os.listdir(out_dir))
            if os.path.isdir(os.path.join(out_dir, d)) and d != "ckpt"]
    done = [d for d in dirs if os.path.exists(os.path.join(d, "summary.json"))]
    return (done or dirs)[-1]


def ledger(out_dir) -> list[dict]:
    path = os.path.join(job_dir(out_dir), "errors.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_rows(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture
def dj(capfd):
    """Run ``dj-process`` in this process: (exit code, stdout, stderr); never a traceback."""
    from data_juicer.cli.process import main

    def _run(*argv):
        rc = main(list(argv))
        out, err = capfd.readouterr()
        assert "Traceback" not in out + err, out + err
        return rc, out, err

    return _run


def run_subprocess(args: list, **kw) -> subprocess.CompletedProcess:
    """``python -m data_juicer.cli.process ARGS`` as a user runs it (this checkout on the path)."""
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.update(kw.pop("env", {}))
    return subprocess.run([sys.executable, "-m", "data_juicer.cli.process", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, **kw)


def one_paragraph(err: str) -> str:
    """The ``dj-process: error:`` message (one line/paragraph) of stderr."""
    lines = [line for line in err.splitlines() if line.startswith("dj-process: error:")]
    assert len(lines) == 1, err
    return lines[0]
