"""LLM generation backends shared by every LLM/VLM op: ``api`` (OpenAI-compatible HTTP), ``vllm``
(in-process engine), ``hf`` (transformers). See :mod:`data_juicer.models.llm.base` for the
contract and :mod:`data_juicer.models.llm.op_params` for the op-side helper.

Nothing heavy is imported here: the backends import httpx / vllm / torch when built.
"""

from __future__ import annotations

from typing import Optional

from data_juicer.models.llm.base import (ChatBackend, LLMError, LLMRequestError, LLMResponseError,
                                         parse_batch_with_retry, parse_with_retry, request_key)

__all__ = ["build_chat_backend", "ChatBackend", "LLMError", "LLMRequestError", "LLMResponseError",
           "parse_with_retry", "parse_batch_with_retry", "request_key"]

KINDS = ("api", "vllm", "hf")


def build_chat_backend(kind: str = "api", model: str = "", endpoint: Optional[str] = None,
                       response_path: Optional[str] = None, model_params: Optional[dict] = None,
                       sampling_params: Optional[dict] = None, concurrency: Optional[int] = None,
                       timeout: Optional[float] = None, max_retries: Optional[int] = None,
                       cache_dir: Optional[str] = None, who: str = "", **kw) -> ChatBackend:
    """A generation backend.

    :param kind: ``api`` (OpenAI-compatible server), ``vllm`` (in-process engine) or ``hf``
    :param model: model name (``api``) or a model name/folder (``vllm``, ``hf``)
    :param endpoint: ``api``: a path under the base URL (default ``/chat/completions``) or a full URL
    :param response_path: ``api``: dotted path of the text in the JSON answer
        (default ``choices.0.message.content``)
    :param model_params: ``api``: client options (``base_url``, ``api_key``, ``timeout``,
        ``max_retries``, ``concurrency``, ``default_headers``); ``vllm``: ``vllm.LLM`` arguments;
        ``hf``: ``from_pretrained`` arguments (and ``device``)
    :param sampling_params: generation settings in OpenAI spelling (``temperature``,
        ``max_tokens``, ``response_format``, ...), sent with every request
    :param concurrency: ``api``: most requests in flight at once (default 16)
    :param timeout: ``api``: seconds per request (default 120)
    :param max_retries: ``api``: retries on 429/5xx/timeouts/connection errors (default 3)
    :param cache_dir: a folder for the on-disk response cache (None: no cache)
    :param who: the op asking (for error messages and model ownership)
    """
    cache = None
    if cache_dir:
        from data_juicer.models.llm.cache import LLMCache

        cache = LLMCache(cache_dir)
    if kind == "api":
        from data_juicer.models.llm.api import APIBackend

        return APIBackend(model, endpoint=endpoint, response_path=response_path, model_params=model_params,
                          sampling_params=sampling_params, concurrency=concurrency, timeout=timeout,
                          max_retries=max_retries, cache=cache, **kw)
    if kind == "vllm":
        from data_juicer.models.llm.vllm_backend import VLLMBackend

        return VLLMBackend(model, model_params=model_params, sampling_params=sampling_params, cache=cache, who=who)
    if kind == "hf":
        from data_juicer.models.llm.hf_backend import HFBackend

        return HFBackend(model, model_params=model_params, sampling_params=sampling_params, cache=cache, who=who,
                         **kw)
    raise ValueError(f"unknown LLM backend kind {kind!r}; use one of {', '.join(KINDS)}")
