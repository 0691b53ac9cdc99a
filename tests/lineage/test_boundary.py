"""The compiler and the semantic runtime import no Ray: their rules run anywhere, in milliseconds."""
import subprocess
import sys

CODE = """
import sys
import data_juicer.lineage
from data_juicer.lineage import Call, Program, run_local
from data_juicer.lineage import compiler, failures, local, model, queues, runtime, state
p = Program("b"); p.domain("d"); p.output("o", p.call(Call("c", lambda xs: xs), p.input("x")))
assert run_local(p.compile(), [{"x": 1}]).values("o") == [1]
bad = sorted(m for m in sys.modules if m == "ray" or m.startswith("ray."))
print(bad)
"""


def test_lineage_core_imports_no_ray():
    res = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
