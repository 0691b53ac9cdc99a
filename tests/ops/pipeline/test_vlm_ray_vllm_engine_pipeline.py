import pytest

from data_juicer.ops.pipeline.vlm_ray_vllm_engine_pipeline import VLMRayVLLMEnginePipeline


def test_needs_vllm_or_engine_mode():
    with pytest.raises(ValueError, match="is_hf_model"):
        VLMRayVLLMEnginePipeline(is_hf_model=False)
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(Exception, match="vllm"):
            VLMRayVLLMEnginePipeline()
