"""A real Label Studio server on 127.0.0.1 for the HumanOP tests, one per test session.

The server runs from its own virtual environment (``$LS_VENV``, default /work/lsvenv, made by
``tests/human/start_label_studio.sh install`` when missing); its data folder
(``$TMPDIR/dj_label_studio_<uid>``) is kept between sessions so only the first start pays for the
database migrations. ``label_studio`` gives ``url``, ``token``, ``client`` (an SDK client) and
``annotate(project_id, choose, expect)`` (posts annotations through the API as an annotator
would). ``$LS_URL`` points the tests at a server that is already running instead.
"""

import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("start_label_studio.sh")
TOKEN = os.environ.get("LS_TOKEN", "dj-test-token-0123456789abcdef")
STARTUP_TIMEOUT = float(os.environ.get("LS_STARTUP_TIMEOUT", "1500"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabelStudioServer:
    def __init__(self, url: str, token: str):
        from label_studio_sdk import LabelStudio

        self.url, self.token = url, token
        self.client = LabelStudio(base_url=url, api_key=token)

    def tasks(self, project_id: int) -> list:
        return list(self.client.tasks.list(project=project_id, fields="all"))

    def annotate(self, project_id: int, choose, expect: int, wait: float = 120.0) -> int:
        """Wait until the project has ``expect`` tasks, then annotate each unannotated one with
        ``choose(task data) -> "left" | "right" | None`` (None: leave it); returns how many."""
        deadline = time.monotonic() + wait
        while True:
            tasks = self.tasks(project_id)
            if len(tasks) >= expect or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        n = 0
        for t in tasks:
            side = choose(t.data)
            if side is None or t.annotations:
                continue
            self.client.annotations.create(id=t.id, result=[{
                "from_name": "comparison", "to_name": "answer1", "type": "pairwise", "value": {"selected": side}}])
            n += 1
        return n


def _ready(url: str) -> bool:
    import urllib.request

    try:
        req = urllib.request.Request(url + "/api/projects", headers={"Authorization": f"Token {TOKEN}"})
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status == 200
    except Exception:
        return False


@pytest.fixture(scope="session")
def label_studio(tmp_path_factory):
    if os.environ.get("LS_URL"):  # a server that is already running (and has the token's user)
        yield LabelStudioServer(os.environ["LS_URL"].rstrip("/"), TOKEN)
        return
    port = _free_port()
    data = os.path.join(tempfile.gettempdir(), f"dj_label_studio_{os.getuid()}")
    log = tmp_path_factory.mktemp("label_studio") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", str(SCRIPT), "run", str(port), data], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, env=dict(os.environ, LS_TOKEN=TOKEN))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_TIMEOUT
    try:
        while not _ready(url):
            if proc.poll() is not None:
                raise RuntimeError(f"Label Studio exited with {proc.returncode}; see {log}:\n{log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Label Studio did not answer within {STARTUP_TIMEOUT}s; see {log}")
            time.sleep(2)
        yield LabelStudioServer(url, TOKEN)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
        except Exception:
            os.killpg(proc.pid, signal.SIGKILL)
