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
    # one folder per pytest-xdist worker: two workers' servers never share their files
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    d = os.path.join(tempfile.gettempdir(), f"dj_llm_server_{os.getuid()}" + (f"_{worker}" if worker else ""))
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


def api_params(srv, **model_params) -> dict:
    """Op params that point an LLM op at ``srv`` through the api backend (as at a vLLM server)."""
    return {"model_params": dict({"base_url": srv.base_url, "max_retries": 1}, **model_params)}


def run_recipe(make_recipe, rows, process, **globals_):
    """Run ``dj-process`` on ``rows``; returns (exit code, output rows, ledger entries)."""
    import glob
    import json

    from data_juicer.cli.process import main

    recipe = make_recipe(rows=rows, process=process, **globals_)
    rc = main(["--config", recipe])
    out_dir = os.path.join(os.path.dirname(recipe), "out")
    out = []
    for p in sorted(glob.glob(os.path.join(out_dir, "result*.jsonl"))):
        if not p.endswith("_stats.jsonl"):
            out += [json.loads(line) for line in open(p) if line.strip()]
    ledger = []
    for p in glob.glob(os.path.join(out_dir, "**", "errors.jsonl"), recursive=True):
        ledger += [json.loads(line) for line in open(p) if line.strip()]
    return rc, out, ledger
