"""The generation backend interface every LLM/VLM op talks to, and the retry-until-it-parses helper.

A backend turns chat ``messages`` (``[{"role": ..., "content": ...}]``) into response texts. The
three kinds share prompts, parsing and caching; they differ only in where the tokens come from:

``api``   an OpenAI-compatible HTTP server (OpenAI, a vLLM server, ...), requests concurrent
          up to a limit, retried with backoff on 429/5xx/connection errors, with timeouts
``vllm``  an in-process vLLM engine; a batch of prompts goes into the engine at once
``hf``    ``transformers`` ``generate`` on padded batches

``sampling_params`` are given in OpenAI/vLLM spelling (``temperature``, ``max_tokens``, ``top_p``,
``seed``, ``response_format``, ...); each backend maps them to its own.
"""

from __future__ import annotations

import hashlib
import json
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from typing import Any, Callable, Optional, Sequence

Messages = list[dict]

# a raw response is carried in errors (and so in the error ledger) up to this many characters
RAW_LIMIT = 2000


class LLMError(RuntimeError):
    """Base of the errors a generation backend raises."""


class LLMRequestError(LLMError):
    """A request could not be answered (HTTP error, timeout, server gone) after the retries."""

    def __init__(self, message: str, status: Optional[int] = None):
        self.status = status
        super().__init__(message)


class LLMResponseError(LLMError):
    """A response never parsed within ``try_num`` attempts; ``raw`` is the last response text."""

    def __init__(self, message: str, raw: str = "", attempts: int = 0, model: str = ""):
        self.raw, self.attempts, self.model = raw, attempts, model
        shown = raw if len(raw) <= RAW_LIMIT else raw[:RAW_LIMIT] + f"... ({len(raw)} chars)"
        super().__init__(f"{message} (model {model!r}, {attempts} attempt(s)); raw response: {shown!r}")


def request_key(model: str, messages: Any, params: dict, attempt: int = 0) -> str:
    """A stable key of one request: the same (model, prompt, params, attempt) gives the same key."""
    blob = json.dumps([model, messages, params, attempt], sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class _Memo:
    """A small in-process LRU of finished requests (results and final failures).

    When an op's batch fails on one sample the executor retries the batch row by row; the memo
    (filled only when a batch is about to raise) answers the samples that already succeeded, and
    re-raises the one that failed, without a second request.
    """

    def __init__(self, size: int = 4096):
        self.size, self._d, self._lock = size, OrderedDict(), threading.Lock()

    def pop(self, key):
        """The entry for ``key``, removed (each is answered once: the row-by-row retry asks once per row)."""
        with self._lock:
            return self._d.pop(key, None)

    def put(self, key, value) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)


class ChatBackend(ABC):
    """Generates chat responses. Subclasses implement :meth:`_generate` on a batch of requests.

    ``chat`` keeps the order of its input, reads and fills the on-disk cache (when one is given),
    and hands the uncached requests to the backend in one batch (concurrent HTTP requests, or
    one engine call).
    """

    kind: str = ""

    def __init__(self, model: str, sampling_params: Optional[dict] = None, cache=None):
        self.model = model
        self.sampling_params = dict(sampling_params or {})
        self.cache = cache  # an LLMCache (on disk) or None
        self.calls = 0  # requests actually sent to the model (not answered by a cache)
        self.memo = _Memo()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} kind={self.kind} model={self.model!r}>"

    # -- what a backend implements ---------------------------------------------------------
    @abstractmethod
    def _generate(self, batch: list[Messages], params: dict) -> list:
        """Response texts of ``batch`` in order; an item may be an ``LLMError`` for that request."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise NotImplementedError(f"the {self.kind} backend has no embeddings")

    def close(self) -> None:
        pass

    # -- what ops call ---------------------------------------------------------------------
    def params_with(self, overrides: Optional[dict]) -> dict:
        params = dict(self.sampling_params)
        params.update(overrides or {})
        return params

    def chat(self, batch: Sequence[Messages], *, attempt: int = 0, return_exceptions: bool = False,
             **overrides) -> list:
        """Response texts of a batch of chats, in order.

        ``overrides`` are sampling params for these calls. ``attempt`` is part of the cache key,
        so a retry after an unparseable response is a new request (and a rerun replays each
        attempt from the cache). With ``return_exceptions`` a failed request is an ``LLMError``
        in its place; otherwise the first one is raised.
        """
        params = self.params_with(overrides)
        keys = [request_key(self.model, m, params, attempt) for m in batch]
        out: list = [None] * len(batch)
        todo = []
        for i, k in enumerate(keys):
            hit = self.cache.get(k) if self.cache is not None else None
            if hit is not None:
                out[i] = hit
            else:
                todo.append(i)
        if todo:
            self.calls += len(todo)
            got = self._generate([batch[i] for i in todo], params)
            for i, r in zip(todo, got):
                out[i] = r
                if self.cache is not None and isinstance(r, str):
                    self.cache.put(keys[i], r)
        if not return_exceptions:
            for r in out:
                if isinstance(r, BaseException):
                    raise r
        return out

    def chat_one(self, messages: Messages, **overrides) -> str:
        return self.chat([messages], **overrides)[0]


def parse_batch_with_retry(backend: ChatBackend, batch: Sequence[Messages], parse_fn: Callable[[str], Any],
                           try_num: int = 3, *, return_exceptions: bool = False, **overrides) -> list:
    """Send every chat of ``batch``, parse each response with ``parse_fn``, resend those that did not parse.

    ``parse_fn(text)`` returns the parsed value, or ``None`` / raises ``ValueError`` when the
    text is not acceptable. After ``try_num`` attempts a sample's result is an
    :class:`LLMResponseError` carrying its last raw response (raised unless
    ``return_exceptions``). Request failures (timeouts, HTTP errors after retries) are not
    retried here: the backend already did.
    """
    results: list = [None] * len(batch)
    raws = [""] * len(batch)
    keys = [request_key(backend.model, m, backend.params_with(overrides), -1) for m in batch]
    pending = []
    for i, k in enumerate(keys):
        hit = backend.memo.pop(k)
        if hit is not None:
            results[i] = hit
        else:
            pending.append(i)
    for attempt in range(max(1, try_num)):
        if not pending:
            break
        texts = backend.chat([batch[i] for i in pending], attempt=attempt, return_exceptions=True, **overrides)
        still = []
        for i, text in zip(pending, texts):
            if isinstance(text, BaseException):
                results[i] = text
                continue
            raws[i] = text
            try:
                value = parse_fn(text)
            except ValueError:
                value = None
            if value is None:
                still.append(i)
            else:
                results[i] = value
        pending = still
    for i in pending:
        results[i] = LLMResponseError("the response did not parse", raw=raws[i], attempts=max(1, try_num),
                                      model=backend.model)
    failed = [r for r in results if isinstance(r, BaseException)]
    if failed and not return_exceptions:
        for k, r in zip(keys, results):  # for the executor's row-by-row retry of this batch
            if isinstance(r, LLMResponseError) or not isinstance(r, BaseException):
                backend.memo.put(k, r)
        raise failed[0]
    return results


def parse_with_retry(backend: ChatBackend, messages: Messages, parse_fn: Callable[[str], Any],
                     try_num: int = 3, **overrides) -> Any:
    """One chat: the parsed response, retried up to ``try_num`` times; raises :class:`LLMResponseError`."""
    return parse_batch_with_retry(backend, [messages], parse_fn, try_num, **overrides)[0]
