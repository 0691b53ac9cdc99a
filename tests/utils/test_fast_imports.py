"""utils/fast_imports.py: numba loads without importing scipy.linalg, the kernels give the same
values, and scipy.linalg imports normally afterwards. Each check runs in a fresh interpreter
(the hook acts on the first import only)."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

PROBE = r"""
import json, sys
import numpy as np
import data_juicer  # installs the hook
from data_juicer.ops.common import repetition_kernels as rk
import numba
import numba.np.arraymath as am
out = {"blas": am._HAVE_BLAS, "scipy_linalg_loaded": "scipy.linalg" in sys.modules,
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


def _probe(extra_env=None):
    env = {k: v for k, v in os.environ.items() if k != "DJ_NUMBA_BLAS_CHECK"}
    env.update(extra_env or {})
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_numba_loads_without_scipy_linalg():
    out = _probe()
    assert out["blas"] is False  # numba's own loop for np.dot
    assert out["scipy_linalg_loaded"] is False
    assert out["hook_left"] is False  # the finder removed itself after its one use
    assert out["dot"] == 14.0  # 0*0 + 1*1 + 2*2 + 3*3
    assert out["scipy_linalg_after"] is True


@pytest.mark.slow
def test_switched_off_by_env():
    out = _probe({"DJ_NUMBA_BLAS_CHECK": "1"})
    assert out["blas"] is True
    assert out["scipy_linalg_loaded"] is True
    assert out["dot"] == 14.0
