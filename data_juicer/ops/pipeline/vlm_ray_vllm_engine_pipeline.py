from typing import Dict, Optional

from data_juicer.ops.mapper.image_tagging_vlm_mapper import file_data_url
from data_juicer.ops.pipeline.llm_ray_vllm_engine_pipeline import DEFAULT_ENGINE_KWARGS, LLMRayVLLMEnginePipeline
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("vlm_ray_vllm_engine_pipeline")
class VLMRayVLLMEnginePipeline(LLMRayVLLMEnginePipeline):
    """Generates ``response_key`` from each sample's ``query_key`` text and its images
    (``image_key``) with an in-process vLLM vision-language engine (``engine_kwargs`` over
    Data-Juicer's defaults); the images go as OpenAI ``image_url`` parts. Runs as a batched
    row-wise op on both executors (Data-Juicer: Ray only, through Ray Data's LLM processor); a
    missing vLLM is an error when the op is built. ``is_hf_model: false`` is not supported, as
    in Data-Juicer.
    """

    modality = "multimodal"

    def __init__(
        self,
        api_or_hf_model: str = "Qwen/Qwen2.5-7B-Instruct",
        is_hf_model: bool = True,
        *,
        system_prompt: Optional[str] = None,
        accelerator_type: Optional[str] = None,
        sampling_params: Optional[Dict] = None,
        engine_kwargs: Optional[Dict] = None,
        **kwargs,
    ):
        """
        :param api_or_hf_model: the Hugging Face VLM for vLLM
        :param is_hf_model: must be true (a vLLM engine)
        :param system_prompt: system prompt
        :param accelerator_type: GPU type for Ray scheduling (e.g. ``A100``)
        :param sampling_params: generation settings
        :param engine_kwargs: vLLM engine arguments over the defaults
        :param api_url: not used (engine only)
        :param api_key: not used (engine only)
        """
        if not is_hf_model:
            raise ValueError("vlm_ray_vllm_engine_pipeline: only a vLLM engine is supported (is_hf_model: true)")
        super().__init__(api_or_hf_model, True, system_prompt=system_prompt, accelerator_type=accelerator_type,
                         sampling_params=sampling_params, engine_kwargs=dict(DEFAULT_ENGINE_KWARGS,
                                                                             **(engine_kwargs or {})), **kwargs)

    def build_messages(self, row: dict) -> list:
        content = [{"type": "text", "text": row[self.query_key] + "\n\n"}]
        content += [{"type": "image_url", "image_url": {"url": file_data_url(p, "image/jpeg", self.name)}}
                    for p in (row.get(self.image_key) or [])]
        msgs = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return msgs + [{"role": "user", "content": content}]
