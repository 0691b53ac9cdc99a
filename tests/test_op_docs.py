import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_operator_docs_are_current():
    res = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "op_docs.py"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr + " — regenerate with `python tools/op_docs.py` and commit docs/Operators.md"
