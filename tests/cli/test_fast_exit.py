"""cli/fast_exit.py: the exit hook runs the other exit hooks once, flushes, and exits with the run's code;
an uncaught exception or DJ_FAST_EXIT=0 keeps Python's own exit."""
import os
import subprocess
import sys

import pytest

PROG = """
import atexit, sys
atexit.register(lambda: open(sys.argv[1], "a").write("hook\\n"))
from data_juicer.cli import fast_exit
fast_exit.arm(3)
print("printed, not flushed yet", end="")
{tail}
"""


def _run(tmp_path, tail, env=None):
    marker = tmp_path / "hooks.txt"
    p = subprocess.run([sys.executable, "-c", PROG.format(tail=tail), str(marker)], capture_output=True,
                       text=True, env={**os.environ, **(env or {})}, timeout=120)
    return p, (marker.read_text() if marker.exists() else "")


def test_exit_code_hooks_once_and_output_flushed(tmp_path):
    p, hooks = _run(tmp_path, "sys.exit(3)")
    assert p.returncode == 3 and hooks == "hook\n" and p.stdout == "printed, not flushed yet"


def test_uncaught_exception_keeps_python_exit(tmp_path):
    p, hooks = _run(tmp_path, "raise ValueError('late')")
    assert p.returncode == 1 and "ValueError: late" in p.stderr and hooks == "hook\n"


@pytest.mark.parametrize("tail", ["sys.exit(5)"])
def test_switch_off(tmp_path, tail):
    p, hooks = _run(tmp_path, tail, {"DJ_FAST_EXIT": "0"})
    assert p.returncode == 5 and hooks == "hook\n"
