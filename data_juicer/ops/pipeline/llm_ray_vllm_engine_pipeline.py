import os
from typing import Dict, Optional

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.ops.base import OP
from data_juicer.ops.registry import OPERATORS

DEFAULT_ENGINE_KWARGS = dict(enable_chunked_prefill=True, max_num_batched_tokens=4096, max_model_len=4096,
                             tensor_parallel_size=1, pipeline_parallel_size=1, trust_remote_code=True)


@OPERATORS.register_module("llm_ray_vllm_engine_pipeline")
class LLMRayVLLMEnginePipeline(LLMOpMixin, OP):
    """Generates ``response_key`` from the ``query_key`` field of every sample (with an optional
    system prompt) with a vLLM engine (``is_hf_model``, the default: ``engine_kwargs`` over
    Data-Juicer's defaults) or an OpenAI-compatible endpoint (``api_url``: the full
    ``.../chat/completions`` URL, else ``$OPENAI_BASE_URL``; ``api_key`` else ``$OPENAI_API_KEY``).

    It runs as a batched row-wise op: the requests of a batch go to the engine at once (vLLM's
    continuous batching) or concurrently to the endpoint; on the Ray executor each worker is an
    actor with its engine. Data-Juicer builds Ray Data's ``build_llm_processor`` and runs only on
    Ray; here the same op also runs on the default executor, and a missing vLLM (engine mode) or
    URL (API mode) is an error when the op is built, naming what to install or set. A key is not
    required (local servers take none). A failed request sends that sample to the error ledger
    (Data-Juicer writes None).
    """

    _accelerator = "cuda"
    op_type = "other"
    modality = "text"

    def __init__(
        self,
        api_or_hf_model: str = "Qwen/Qwen2.5-7B-Instruct",
        is_hf_model: bool = True,
        *,
        system_prompt: Optional[str] = None,
        accelerator_type: Optional[str] = None,
        sampling_params: Optional[Dict] = None,
        engine_kwargs: Optional[Dict] = None,
        api_url: str = None,
        api_key: str = None,
        **kwargs,
    ):
        """
        :param api_or_hf_model: Hugging Face model for vLLM, or the API model name
        :param is_hf_model: run an in-process vLLM engine (else call the API)
        :param system_prompt: system prompt
        :param accelerator_type: GPU type for Ray scheduling (e.g. ``A100``); None: any / CPU
        :param sampling_params: generation settings (e.g. ``temperature``, ``max_tokens``)
        :param engine_kwargs: vLLM engine arguments over the defaults
        :param api_url: full chat-completions URL (API mode)
        :param api_key: API key (API mode; default ``$OPENAI_API_KEY``)
        """
        super().__init__(**kwargs)
        self.api_or_hf_model = api_or_hf_model
        self.is_hf_model = is_hf_model
        self.system_prompt = system_prompt
        self.accelerator_type = accelerator_type
        self.engine_kwargs = dict(DEFAULT_ENGINE_KWARGS, **(engine_kwargs or {}))
        if is_hf_model:
            self.init_llm(model=api_or_hf_model, kind="vllm", model_params=self.engine_kwargs,
                          sampling_params=sampling_params, try_num=1)
        else:
            url = api_url
            if not url and os.environ.get("OPENAI_BASE_URL"):
                url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
            if not url:
                raise ValueError(f"{self.name}: API mode (is_hf_model: false) needs `api_url` (the full "
                                 f".../chat/completions URL) or the OPENAI_BASE_URL environment variable")
            mp = {"api_key": api_key} if api_key else {}
            self.init_llm(model=api_or_hf_model, kind="api", api_endpoint=url, model_params=mp,
                          sampling_params=sampling_params, try_num=1)
            self.accelerator = "cpu"

    def __repr__(self):  # never show the key
        return f"<{type(self).__name__} {self.name}>"

    def build_messages(self, row: dict) -> list:
        return chat_messages(row[self.query_key], self.system_prompt)

    @property
    def is_row_wise(self) -> bool:
        return True

    def run_batch(self, samples: dict[str, list]) -> dict[str, list]:
        keys = list(samples)
        n = len(samples[keys[0]]) if keys else 0
        rows = [{k: samples[k][i] for k in keys} for i in range(n)]
        samples[self.response_key] = [str(t) for t in self.llm_chat([self.build_messages(r) for r in rows])]
        return samples
