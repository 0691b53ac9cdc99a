"""Pytest fixtures for a real OpenAI-compatible server on 127.0.0.1 (see data_juicer.models.llm.local_server).

Use in a test module:  ``from tests.llm_fixtures import llm_server  # noqa: F401``

``llm_server`` is one server process per test session (started on first use, stopped at the
end of the session), backed by a tiny seeded-random causal LM through ``transformers`` on the
CPU; each test gets it reset (no faults queued, request log and stats cleared). Attributes and
hooks: ``base_url`` (``http://127.0.0.1:<port>/v1``), ``served_name``, ``respond(content,
match=None)``, ``faults(...)``, ``requests()``, ``stats()``, ``reset()``; see ServerProcess.

``llm_server_factory`` starts extra servers a test may kill (``factory()`` -> a started one,
stopped after the test).
"""

import os
import tempfile

import pytest

from data_juicer.models.llm.local_server import ServerProcess

_SESSION = {}


def _work_dir() -> str:
    d = os.path.join(tempfile.gettempdir(), f"dj_llm_server_{os.getuid()}")
    os.makedirs(d, exist_ok=True)
    return d


def _session_server(config) -> ServerProcess:
    srv = _SESSION.get("server")
    if srv is None or not srv.alive:
        srv = ServerProcess(model="tiny", work_dir=_work_dir()).start()
        _SESSION["server"] = srv
        if not _SESSION.get("cleanup"):
            config.add_cleanup(lambda: _SESSION["server"].stop())
            _SESSION["cleanup"] = True
    return srv


@pytest.fixture
def llm_server(request, monkeypatch):
    srv = _session_server(request.config)
    srv.reset()
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield srv


@pytest.fixture
def llm_server_factory():
    started = []

    def factory(**kw):
        srv = ServerProcess(work_dir=_work_dir(), **dict({"model": "tiny"}, **kw)).start()
        started.append(srv)
        return srv

    yield factory
    for srv in started:
        srv.stop()
