import pytest

from data_juicer.ops.pipeline.llm_ray_vllm_engine_pipeline import LLMRayVLLMEnginePipeline
from tests.llm_fixtures import llm_server, run_recipe  # noqa: F401


def test_api_mode_batch(llm_server):
    llm_server.respond("resp")
    op = LLMRayVLLMEnginePipeline(api_or_hf_model="tiny-llm", is_hf_model=False, system_prompt="S",
                                  api_url=llm_server.base_url + "/chat/completions", api_key="sk-x",
                                  sampling_params={"temperature": 0})
    out = op.run_batch({"query": ["a", "b"]})
    assert out["response"] == ["resp", "resp"]
    assert llm_server.requests()[0]["messages"][0] == {"role": "system", "content": "S"}
    assert "sk-x" not in repr(op)


def test_api_mode_needs_a_url(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="api_url"):
        LLMRayVLLMEnginePipeline(is_hf_model=False)


def test_engine_mode_needs_vllm():
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(Exception, match="vllm"):
            LLMRayVLLMEnginePipeline()
    else:
        pytest.skip("vllm is installed here; the engine path is covered by tests/models/llm/test_vllm_backend.py")


def test_end_to_end_default_executor(llm_server, make_recipe):
    llm_server.respond("answer")
    op = {"llm_ray_vllm_engine_pipeline": {"api_or_hf_model": "tiny-llm", "is_hf_model": False,
                                           "api_url": llm_server.base_url + "/chat/completions"}}
    rc, out, ledger = run_recipe(make_recipe, [{"query": "q1"}, {"query": "q2"}], [op], text_keys="query")
    assert rc == 0 and [r["response"] for r in out] == ["answer", "answer"] and ledger == []
