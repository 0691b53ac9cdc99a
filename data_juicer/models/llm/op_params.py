"""The op side of the LLM backends: one helper for Data-Juicer's common LLM op parameters.

An op calls :meth:`LLMOpMixin.init_llm` in its constructor with the parameters it has
(``api_model``, ``api_endpoint``, ``response_path``, ``model_params``, ``sampling_params``,
``try_num``, ``enable_vllm``, ``hf_model`` / ``api_or_hf_model`` + ``is_hf_model``) and then uses
``self.llm`` (the backend, built lazily once per worker process), :meth:`llm_chat` and
:meth:`llm_parse`. Which backend:

* ``enable_vllm`` -> ``vllm`` (in-process engine on the hf model)
* an HF model (``hf_model`` without ``api_model``, or ``is_hf_model``) -> ``hf``
* ``model_params.base_url`` given -> ``api`` whatever the op's default (a model served by a
  vLLM / OpenAI-compatible server; also how hf-only ops reach a server)
* otherwise -> ``api`` (``api_model`` at ``api_endpoint`` / ``$OPENAI_BASE_URL``)

When the recipe's ``use_cache`` is on (the executor sets ``op.use_cache``), responses are
cached on disk in ``<work_dir>/../llm_cache`` so a rerun does not send them again. With
``use_checkpoint`` (and no ``use_cache``) every finished response is journaled in
``<checkpoint_dir>/llm_requests/`` as it arrives: op-level checkpoints cover finished ops only, and
the journal lets a rerun after a stop part-way through an LLM op (a failed sample with
``skip_op_error: false``, a server that went away, a killed process) replay the finished requests
and send only the rest.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional, Sequence

from data_juicer.models.llm.base import ChatBackend, Messages, parse_batch_with_retry

# with use_checkpoint, finished responses are journaled in <checkpoint_dir>/<JOURNAL_DIR>/llm_cache.sqlite
JOURNAL_DIR = "llm_requests"


def chat_messages(user: str, system: Optional[str] = None) -> Messages:
    """``[system?, user]`` messages."""
    msgs = [{"role": "system", "content": system}] if system else []
    msgs.append({"role": "user", "content": user})
    return msgs


class LLMOpMixin:
    """Mixed into LLM ops (before the op base class)."""

    llm_kind: str = "api"

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        """What the chosen backend needs: vllm, transformers (hf) or httpx (api)."""
        if (params.get("model_params") or {}).get("base_url"):
            return ("httpx",)
        if params.get("enable_vllm"):
            return ("vllm",)
        if params.get("is_hf_model") or (params.get("hf_model") and not params.get("api_model")):
            return ("torch", "transformers")
        return ("httpx",)

    def init_llm(self, *, model: str, kind: Optional[str] = None, enable_vllm: bool = False, is_hf_model: bool = False,
                 api_endpoint: Optional[str] = None, response_path: Optional[str] = None,
                 model_params: Optional[dict] = None, sampling_params: Optional[dict] = None, try_num: int = 3,
                 default_sampling: Optional[dict] = None) -> None:
        """Record the backend settings; nothing is loaded or connected here except a check that an
        ``hf``/``vllm`` model and its packages are there (so a recipe fails before any data is read)."""
        if kind is None or (model_params or {}).get("base_url"):
            # a model served elsewhere (model_params.base_url) is reached over HTTP, whatever the op's default
            hf_kind = kind if kind in ("hf", "vllm") else ("hf" if is_hf_model else "api")
            kind = "api" if (model_params or {}).get("base_url") else ("vllm" if enable_vllm else hf_kind)
        self.llm_kind = kind
        self.llm_model = model
        self.api_endpoint = api_endpoint
        self.response_path = response_path
        self.model_params = dict(model_params or {})
        sp = dict(default_sampling or {})
        sp.update(sampling_params or {})
        self.sampling_params = sp
        self.try_num = try_num
        self._llm: Optional[ChatBackend] = None
        # an in-process engine is loaded once per worker: on Ray such an op runs in an actor pool
        # (an api client is cheap, and its passes run as plain tasks)
        self.uses_model = kind in ("hf", "vllm")
        if kind == "hf":
            from data_juicer.models.hf import check_hf_model

            check_hf_model(model, who=self.name)
        elif kind == "vllm":
            from data_juicer.models.loader import ensure_installed

            ensure_installed(("vllm",), self.name)

    def _llm_cache_dir(self) -> Optional[str]:
        """Where responses are kept on disk: the shared cache (``use_cache``), else the checkpoint's
        request journal (``use_checkpoint``), else nowhere."""
        if not getattr(self, "work_dir", None):
            return None
        if getattr(self, "use_cache", False):
            return os.path.join(os.path.dirname(os.path.abspath(self.work_dir)), "llm_cache")
        ckpt = self._checkpoint_dir()
        return os.path.join(ckpt, JOURNAL_DIR) if ckpt else None

    def _checkpoint_dir(self) -> Optional[str]:
        """The recipe's checkpoint folder when ``use_checkpoint`` is on (else None).

        The executor sets ``op.checkpoint_dir``; ops built otherwise (tests, tools) have none. As a
        fallback for an executor that does not set it, the job folder's resolved recipe
        (``<work_dir>/cli.yaml``) is read: ``use_checkpoint`` and ``checkpoint_dir`` (default
        ``<folder of job folders>/ckpt``).
        """
        if "checkpoint_dir" in self.__dict__:
            return self.__dict__["checkpoint_dir"]
        cfg_path = os.path.join(self.work_dir, "cli.yaml")
        ckpt = None
        if os.path.isfile(cfg_path):
            import yaml

            try:
                with open(cfg_path, encoding="utf-8") as f:
                    cfg = yaml.safe_load(f) or {}
            except (OSError, yaml.YAMLError):
                cfg = {}
            if cfg.get("use_checkpoint"):
                ckpt = os.path.abspath(cfg.get("checkpoint_dir")
                                       or os.path.join(os.path.dirname(os.path.abspath(self.work_dir)), "ckpt"))
        self.checkpoint_dir = ckpt
        return ckpt

    @property
    def llm(self) -> ChatBackend:
        if getattr(self, "_llm", None) is None:
            from data_juicer.models.llm import build_chat_backend

            self._llm = build_chat_backend(self.llm_kind, self.llm_model, endpoint=self.api_endpoint,
                                           response_path=self.response_path, model_params=self.model_params,
                                           sampling_params=self.sampling_params, cache_dir=self._llm_cache_dir(),
                                           who=self.name)
        return self._llm

    def __getstate__(self):  # the backend (clients, engines) is rebuilt in each worker process
        d = dict(self.__dict__)
        d["_llm"] = None
        return d

    def llm_chat(self, batch: Sequence[Messages], **overrides) -> list[str]:
        """Response texts of a batch of chats (concurrent / batched), in order; raises on a failed request."""
        return self.llm.chat(list(batch), **overrides)

    def llm_parse(self, batch: Sequence[Messages], parse_fn: Callable[[str], Any], **overrides) -> list:
        """Parsed responses of a batch, each resent up to ``try_num`` times until ``parse_fn`` accepts it.

        Raises the first failure (an unparsed response carries its raw text); the executor then
        retries the batch row by row and the failing sample alone goes to the error ledger (the
        samples that succeeded are answered from the backend's memo, not resent).
        """
        return parse_batch_with_retry(self.llm, list(batch), parse_fn, self.try_num, **overrides)
