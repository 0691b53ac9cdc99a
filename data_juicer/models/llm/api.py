"""The ``api`` backend: any OpenAI-compatible chat / embeddings endpoint over HTTP (httpx).

The base URL is ``model_params['base_url']``, else ``$OPENAI_BASE_URL``; ``endpoint`` (Data-Juicer's
``api_endpoint``) is a path under it (default ``/chat/completions``) or a full URL. The key is
``model_params['api_key']``, else ``$DJ_API_KEY``, else ``$OPENAI_API_KEY``; it is only ever put in
the ``Authorization`` header, never in a message, log line or repr.

A batch is sent as concurrent requests, at most ``concurrency`` in flight from this backend
(default 16). A request is retried with exponential backoff (honouring ``Retry-After``) on 429,
5xx, timeouts and connection errors, up to ``max_retries`` times; after ``down_after`` requests in
a row failed to connect, the server is taken for gone and later requests fail at once (each
becomes that sample's error-ledger entry instead of a long wait).
"""

from __future__ import annotations

import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Optional, Sequence

from data_juicer.models.llm.base import ChatBackend, LLMRequestError, Messages
from data_juicer.utils.lazy import require

DEFAULT_RESPONSE_PATH = "choices.0.message.content"
DEFAULT_EMBED_PATH = "data.0.embedding"
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# client options accepted in model_params (as Data-Juicer passes them to ``openai.OpenAI``)
CLIENT_KEYS = ("base_url", "api_key", "timeout", "max_retries", "default_headers", "organization",
               "concurrency", "down_after")


class LLMText(str):
    """A response text that also carries the request's token ``usage`` (a dict, or None)."""

    usage: Optional[dict] = None


def get_path(obj, path: str):
    """The value at a dotted path through dicts and lists (``choices.0.message.content``), else None."""
    for part in path.split("."):
        if isinstance(obj, dict):
            obj = obj.get(part)
        elif isinstance(obj, list) and part.lstrip("-").isdigit() and -len(obj) <= int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return None
        if obj is None:
            return None
    return obj


def resolve_url(endpoint: Optional[str], base_url: Optional[str], default_path: str) -> str:
    """The full URL to post to; a base URL without a path suffix gets ``default_path``."""
    base = (base_url or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/")
    if endpoint and endpoint.startswith(("http://", "https://")):
        url = endpoint.rstrip("/")
        if not url.endswith(("/chat/completions", "/completions", "/embeddings", "/responses")):
            url += default_path
        return url
    if not base:
        raise ValueError("no API base URL: set `model_params: {base_url: ...}`, a full `api_endpoint` URL, "
                         "or the OPENAI_BASE_URL environment variable")
    return base + "/" + (endpoint or default_path).lstrip("/")


def _api_key(model_params: dict) -> Optional[str]:
    return model_params.get("api_key") or os.environ.get("DJ_API_KEY") or os.environ.get("OPENAI_API_KEY")


class APIBackend(ChatBackend):
    kind = "api"

    def __init__(self, model: str, endpoint: Optional[str] = None, response_path: Optional[str] = None,
                 model_params: Optional[dict] = None, sampling_params: Optional[dict] = None,
                 concurrency: Optional[int] = None, timeout: Optional[float] = None,
                 max_retries: Optional[int] = None, cache=None, embed_endpoint: Optional[str] = None,
                 embed_response_path: Optional[str] = None):
        super().__init__(model, sampling_params, cache)
        mp = dict(model_params or {})
        self.url = resolve_url(endpoint, mp.get("base_url"), "/chat/completions")
        self.embed_url = resolve_url(embed_endpoint, mp.get("base_url") or self.url.rsplit("/chat/", 1)[0],
                                     "/embeddings")
        self.response_path = response_path or DEFAULT_RESPONSE_PATH
        self.embed_response_path = embed_response_path or DEFAULT_EMBED_PATH
        self.concurrency = int(concurrency or mp.get("concurrency") or 16)
        self.timeout = float(timeout or mp.get("timeout") or 120.0)
        self.max_retries = int(max_retries if max_retries is not None else mp.get("max_retries", 3))
        self.down_after = int(mp.get("down_after", 3))
        self._headers = {"Content-Type": "application/json", **(mp.get("default_headers") or {})}
        key = _api_key(mp)
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self._client = None
        self._pool = None
        self._lock = threading.Lock()
        self._conn_failures = 0
        self.last_response: Optional[dict] = None  # last JSON body (usage figures etc.)

    def __getstate__(self):  # clients and pools do not travel to worker processes
        d = dict(self.__dict__)
        d["_client"] = d["_pool"] = None
        d["_lock"] = None
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        self._lock = threading.Lock()

    def _http(self):
        with self._lock:
            if self._client is None:
                httpx = require("httpx", who="the api LLM backend")
                limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
                self._client = httpx.Client(timeout=httpx.Timeout(self.timeout, connect=min(10.0, self.timeout)),
                                            limits=limits, headers=self._headers)
                self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="dj-llm")
            return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._pool.shutdown(wait=False)
            self._client = self._pool = None

    # -- one request with retries ----------------------------------------------------------
    def post(self, url: str, body: dict) -> dict:
        """POST ``body`` as JSON and return the JSON answer; retries, then :class:`LLMRequestError`."""
        httpx = require("httpx")
        client = self._http()
        last = ""
        status = None
        for attempt in range(self.max_retries + 1):
            if self._conn_failures >= self.down_after:
                raise LLMRequestError(f"the LLM server at {url} is not reachable ({self._conn_failures} "
                                      f"connection failures in a row; last: {last or 'connection refused'}); "
                                      f"check that it is running", status=None)
            wait = None
            try:
                resp = client.post(url, json=body)
            except httpx.TimeoutException as e:
                last, status = f"timed out after {self.timeout:g}s ({type(e).__name__})", None
            except httpx.TransportError as e:
                self._conn_failures += 1
                last, status = f"{type(e).__name__}: {e}", None
            else:
                self._conn_failures = 0
                if resp.status_code == 200:
                    try:
                        return resp.json()
                    except ValueError:
                        raise LLMRequestError(f"{url} answered 200 with a body that is not JSON: "
                                              f"{resp.text[:300]!r}", status=200) from None
                status = resp.status_code
                last = f"HTTP {status}: {resp.text[:300]}"
                if status not in RETRY_STATUS:
                    raise LLMRequestError(f"{url} refused the request: {last}", status=status)
                ra = resp.headers.get("retry-after")
                if ra:
                    try:
                        wait = min(float(ra), 30.0)
                    except ValueError:
                        wait = None
            if attempt < self.max_retries:
                time.sleep(wait if wait is not None else min(0.25 * 2 ** attempt, 8.0) * (0.5 + random.random()))
        raise LLMRequestError(f"request to {url} failed after {self.max_retries + 1} attempt(s): {last}",
                              status=status)

    def _one(self, messages: Messages, params: dict):
        body = {"model": self.model, "messages": messages, **params}
        try:
            result = self.post(self.url, body)
        except LLMRequestError as e:
            return e
        self.last_response = result
        text = get_path(result, self.response_path)
        if text is None:
            return LLMRequestError(f"the response has nothing at response_path {self.response_path!r}: "
                                   f"{str(result)[:300]}")
        out = LLMText(text if isinstance(text, str) else str(text))
        out.usage = result.get("usage") if isinstance(result, dict) else None
        return out

    def _generate(self, batch: list[Messages], params: dict) -> list:
        self._http()
        if len(batch) == 1:
            return [self._one(batch[0], params)]
        return list(self._pool.map(lambda m: self._one(m, params), batch))

    def embed(self, texts: Sequence[str], **params) -> list[list[float]]:
        """Embeddings of ``texts`` (one request per text, concurrent), in order."""
        self._http()

        def one(t):
            return get_path(self.post(self.embed_url, {"model": self.model, "input": t, **params}),
                            self.embed_response_path)

        return list(self._pool.map(one, list(texts)))
