"""Resuming LLM recipes: a rerun with ``use_checkpoint`` does not resend finished requests, and a
server that dies mid-run gives per-sample ledger entries (rows conserved) or a clean stop that a
rerun with the server back finishes without resending.

Everything runs through ``dj-process`` against the local OpenAI-compatible server over real HTTP;
what was sent is read from the server's own request log.
"""

import glob
import json
import os

import pytest
import yaml

from data_juicer.cli.process import main
from tests.llm_fixtures import llm_server, llm_server_factory  # noqa: F401

GOOD = ('{"dimension_scores": {"accuracy": 5, "grammar": 5, "informativeness": 4, "coherence": 4}, '
        '"flags": [], "rationale": "fine", "recommendation": ["keep"]}')
N = 8


def _rows():
    return [{"text": f"sample number {i:02d} about rivers"} for i in range(N)]


def _recipe(tmp_path, srv, **globals_):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    op = {"llm_quality_score_filter": {"api_or_hf_model": srv.served_name, "batch_size": 2,
                                       "model_params": {"base_url": srv.base_url, "max_retries": 0}}}
    cfg = {"project_name": "t", "np": 1, "dataset_path": str(data), "use_checkpoint": True,
           "export_path": str(tmp_path / "out" / "result.jsonl"), "process": [op]}
    cfg.update(globals_)
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def _run(recipe, tmp_path):
    """(exit code, exported rows, this run's ledger entries)."""
    before = set(glob.glob(str(tmp_path / "out" / "*" / "errors.jsonl")))
    rc = main(["--config", recipe])
    export = tmp_path / "out" / "result.jsonl"
    out = [json.loads(x) for x in export.read_text().splitlines() if x.strip()] if export.exists() else []
    ledger = []
    for p in set(glob.glob(str(tmp_path / "out" / "*" / "errors.jsonl"))) - before:
        ledger += [json.loads(x) for x in open(p) if x.strip()]
    return rc, out, ledger


def _sent(srv):
    """Which samples' prompts the server received (their numbers), in arrival order."""
    got = []
    for body in srv.requests():
        text = "\n".join(str(m.get("content")) for m in body.get("messages", []))
        got += [i for i in range(N) if f"sample number {i:02d} " in text]
    return got


@pytest.mark.parametrize("use_cache", [False, True])
def test_rerun_after_a_failed_sample_sends_only_what_was_not_answered(tmp_path, llm_server, use_cache):
    llm_server.faults({"kind": "status", "status": 400, "match": "sample number 05 ", "times": 100})
    llm_server.respond(GOOD)
    recipe = _recipe(tmp_path, llm_server, skip_op_error=False, use_cache=use_cache)
    rc, out, ledger = _run(recipe, tmp_path)
    assert rc == 1 and out == []  # a clean stop: the op and the sample are named, no traceback
    first = _sent(llm_server)
    # batches of 2: (0,1) (2,3) (4,5) were sent; 5 failed, the run stopped before 6 and 7
    assert sorted(set(first)) == [0, 1, 2, 3, 4, 5] and first.count(4) == 1
    # use_cache (on by default) keeps responses in the shared cache, else the checkpoint's journal has them
    kept = tmp_path / "out" / ("llm_cache" if use_cache else "ckpt/llm_requests") / "llm_cache.sqlite"
    assert kept.is_file()
    assert not (tmp_path / "out" / ("ckpt/llm_requests" if use_cache else "llm_cache")).exists()

    llm_server.reset()
    llm_server.respond(GOOD)
    rc, out, ledger = _run(recipe, tmp_path)
    assert rc == 0 and ledger == []
    assert [r["text"] for r in out] == [r["text"] for r in _rows()]
    assert sorted(_sent(llm_server)) == [5, 6, 7]  # 0-4 were replayed from the journal

    llm_server.reset()  # a third run: the op's checkpoint is complete, nothing is sent at all
    rc, out, _ = _run(recipe, tmp_path)
    assert rc == 0 and len(out) == N and _sent(llm_server) == []


def test_without_use_checkpoint_a_rerun_pays_again(tmp_path, llm_server):
    """The journal belongs to use_checkpoint (or use_cache): without either, nothing is kept."""
    llm_server.respond(GOOD)
    recipe = _recipe(tmp_path, llm_server, use_checkpoint=False, use_cache=False)
    assert _run(recipe, tmp_path)[0] == 0
    llm_server.reset()
    llm_server.respond(GOOD)
    assert _run(recipe, tmp_path)[0] == 0
    assert sorted(_sent(llm_server)) == list(range(N))
    assert not (tmp_path / "out" / "ckpt" / "llm_requests").exists()


@pytest.mark.slow  # 10 s; failed LLM samples in the ledger: tests/llm/test_llm_resume.py rerun test
def test_server_dies_mid_run_samples_go_to_the_ledger(tmp_path, llm_server_factory):
    srv = llm_server_factory()
    srv.faults({"kind": "die", "match": "sample number 04 "})  # exits when sample 4's request arrives
    srv.respond(GOOD)
    rc, out, ledger = _run(_recipe(tmp_path, srv, use_cache=False), tmp_path)
    assert not srv.alive
    assert rc == 0
    assert len(out) + len(ledger) == N  # nothing silently dropped
    assert [r["text"] for r in out][:4] == [r["text"] for r in _rows()[:4]]  # batches before the crash
    assert {e["op"] for e in ledger} == {"llm_quality_score_filter"}
    assert "sample number 04 " in json.dumps([e["sample"] for e in ledger])
    assert all("127.0.0.1" in e["message"] for e in ledger), ledger[0]["message"]


@pytest.mark.slow  # 20 s (two runs, a restart); the mid-run death test stays in the default suite
def test_server_dies_clean_stop_then_rerun_with_the_server_back(tmp_path, llm_server_factory):
    srv = llm_server_factory()
    srv.faults({"kind": "die", "match": "sample number 04 "})
    srv.respond(GOOD)
    recipe = _recipe(tmp_path, srv, skip_op_error=False, use_cache=False)
    rc, out, ledger = _run(recipe, tmp_path)
    assert not srv.alive and rc == 1 and out == []

    back = llm_server_factory(port=srv.port)  # the server comes back where it was
    back.respond(GOOD)
    rc, out, ledger = _run(recipe, tmp_path)
    assert rc == 0 and ledger == []
    assert [r["text"] for r in out] == [r["text"] for r in _rows()]
    resent = sorted(_sent(back))
    # 0-3 were answered before the crash and are not sent again; 4 (which killed it) and 5 (sent
    # beside it, maybe answered first) may be; 6 and 7 were never sent
    assert set(resent) - {4, 5} == {6, 7} and 4 in resent and len(resent) == len(set(resent))


@pytest.mark.parametrize("explicit", [True, False])
def test_journal_folder_from_the_executor_or_the_job_folder(tmp_path, explicit):
    from data_juicer.ops.filter.llm_quality_score_filter import LLMQualityScoreFilter

    job = tmp_path / "work" / "job1"
    job.mkdir(parents=True)
    (job / "cli.yaml").write_text(yaml.safe_dump({"use_checkpoint": True, "checkpoint_dir": None}))
    op = LLMQualityScoreFilter(api_or_hf_model="m", model_params={"base_url": "http://127.0.0.1:9/v1"},
                               work_dir=str(job))
    if explicit:
        op.checkpoint_dir = str(tmp_path / "elsewhere")
        assert op._llm_cache_dir() == os.path.join(str(tmp_path / "elsewhere"), "llm_requests")
    else:
        assert op._llm_cache_dir() == os.path.join(str(tmp_path / "work" / "ckpt"), "llm_requests")
    op.use_cache = True  # the shared response cache wins when both are on
    assert op._llm_cache_dir() == os.path.join(str(tmp_path / "work"), "llm_cache")
