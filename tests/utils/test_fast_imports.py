"""utils/fast_imports.py: under the CLIs (``install()``, first thing in dj-process / dj-analyze main)
numba loads without importing scipy.linalg, np.dot still works, and scipy.linalg imports normally
afterwards; ``import data_juicer`` alone changes nothing. Each check runs in a fresh interpreter (the
hook acts on the first import only)."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

PROBE = r"""
import json, sys
import numpy as np
import data_juicer
from data_juicer.utils import fast_imports
if MODE == "cli":
    fast_imports.install()
out0 = any(type(f).__name__ == "_NumbaWithoutBlasCheck" for f in sys.meta_path)
from data_juicer.ops.common import repetition_kernels as rk
import numba
import numba.np.arraymath as am
out = {"installed": out0, "blas": am._HAVE_BLAS, "scipy_linalg_loaded": "scipy.linalg" in sys.modules,
       "hook_left": any(type(f).__name__ == "_NumbaWithoutBlasCheck" for f in sys.meta_path)}

@numba.njit(cache=False)
def dot(a, b):
    return np.dot(a, b)

out["dot"] = float(dot(np.arange(4.0), np.arange(4.0)))
import scipy.linalg
out["scipy_linalg_after"] = hasattr(scipy.linalg, "solve") and "scipy.linalg.cython_blas" not in [
    k for k, v in sys.modules.items() if v is None]
print(json.dumps(out))
"""


def _probe(mode="cli", extra_env=None):
    env = {k: v for k, v in os.environ.items() if k != "DJ_NUMBA_BLAS_CHECK"}
    env.update(extra_env or {})
    r = subprocess.run([sys.executable, "-c", f"MODE = {mode!r}\n" + PROBE], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_numba_loads_without_scipy_linalg():
    out = _probe()
    assert out["installed"] is True
    assert out["blas"] is False  # numba's own loop for np.dot
    assert out["scipy_linalg_loaded"] is False
    assert out["hook_left"] is False  # the finder removed itself after its one use
    assert out["dot"] == 14.0  # 0*0 + 1*1 + 2*2 + 3*3
    assert out["scipy_linalg_after"] is True


@pytest.mark.slow
def test_switched_off_by_env():
    out = _probe(extra_env={"DJ_NUMBA_BLAS_CHECK": "1"})
    assert out["installed"] is False
    assert out["blas"] is True
    assert out["scipy_linalg_loaded"] is True
    assert out["dot"] == 14.0


def test_library_import_adds_no_finder():
    code = ("import sys, data_juicer; "
            "print(any(type(f).__name__ == '_NumbaWithoutBlasCheck' for f in sys.meta_path))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "False"


@pytest.mark.slow
def test_library_import_leaves_numba_alone():
    out = _probe(mode="library")
    assert out["installed"] is False
    assert out["blas"] is True and out["scipy_linalg_loaded"] is True
    assert out["dot"] == 14.0


def test_cli_mains_install_it(monkeypatch):
    import data_juicer.cli.analyze as analyze
    import data_juicer.cli.process as process
    from data_juicer.utils import fast_imports

    calls = []
    monkeypatch.setattr(fast_imports, "install", lambda: calls.append(1))
    assert process.main(["--help"]) == 0
    assert analyze.main(["--help"]) == 0
    assert len(calls) == 2
