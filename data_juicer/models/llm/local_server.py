"""A small OpenAI-compatible server over a local ``transformers`` model (FastAPI + uvicorn).

For tests and benchmarks on 127.0.0.1: ``/v1/chat/completions`` (with ``response_format`` json
/ JSON-schema / regex constrained decoding, and vLLM's ``guided_regex`` / ``guided_json``),
``/v1/embeddings``, ``/v1/models``, ``/health``. Requests are queued and batched into the engine
(a worker thread takes everything waiting, up to ``max_batch``, into one ``generate`` call).

Test hooks (not part of the OpenAI API) make it misbehave on purpose, through real HTTP:
``POST /_test/faults`` ``{"faults": [{"kind": ..., "match": "substring", "times": 1, ...}]}`` where
kind is ``content`` (answer ``content`` instead of generating), ``status`` (answer HTTP
``status``), ``sleep`` (wait ``seconds`` first), ``bad_json`` (a 200 whose body is not JSON) or
``die`` (the process exits); ``GET /_test/requests`` lists the bodies received;
``GET /_test/stats`` gives request counts, the most requests in flight at once, the engine's
batch sizes and ``span_s`` (first request in to last answer out); ``POST /_test/reset`` clears all of it.

Run: ``python -m data_juicer.models.llm.local_server --model <folder>|tiny --port 8000``.
:class:`ServerProcess` starts one in a subprocess and waits until it answers.
"""


import argparse
import asyncio
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import uuid
from typing import Optional


# -- the app --------------------------------------------------------------------------------
class _Batcher:
    """Feeds queued requests to the engine in batches from one worker thread."""

    def __init__(self, engine, max_batch: int, gap: float = 0.01, max_wait: float = 0.05):
        self.engine, self.max_batch = engine, max_batch
        self.gap, self.max_wait = gap, max_wait  # stop gathering after `gap` s without an arrival
        self.q: queue.Queue = queue.Queue()
        self.batch_sizes: list[int] = []
        threading.Thread(target=self._loop, daemon=True).start()

    def submit(self, loop, messages, params) -> asyncio.Future:
        fut = loop.create_future()
        self.q.put((loop, fut, messages, params))
        return fut

    def _loop(self):
        while True:
            items = [self.q.get()]
            deadline = time.monotonic() + self.max_wait
            # gather the requests arriving together (clients resend as soon as their answers come)
            while len(items) < self.max_batch:
                try:
                    items.append(self.q.get(timeout=max(0.0, min(self.gap, deadline - time.monotonic()))))
                except queue.Empty:
                    break
            self.batch_sizes.append(len(items))
            try:
                gens = self.engine.generate([it[2] for it in items], [it[3] for it in items])
                for (loop, fut, _, _), g in zip(items, gens):
                    loop.call_soon_threadsafe(_set, fut, g)
            except Exception as e:  # an engine error answers every request of that batch with it
                for loop, fut, _, _ in items:
                    loop.call_soon_threadsafe(_set_exc, fut, e)


def _set(fut, value):
    if not fut.done():
        fut.set_result(value)


def _set_exc(fut, exc):
    if not fut.done():
        fut.set_exception(exc)


class RatingEngine:
    """A deterministic stand-in for a model (``--model rating``): answers every chat at once with a
    quality-rating JSON (Data-Juicer's ``llm_*_score_filter`` format) whose scores (1-5) come from a
    hash of the last user message, so a client's parsing and decisions can be compared across
    frameworks while the server costs next to nothing (benchmarks of the client side)."""

    instant = True
    DIMS = ("accuracy", "grammar", "informativeness", "coherence", "clarity", "relevance", "usefulness",
            "fluency")

    def generate(self, batch, params):
        import hashlib
        import json

        from data_juicer.models.llm.engine import Generation, content_text

        out = []
        for messages in batch:
            user = [content_text(m.get("content")) for m in messages if m.get("role") == "user"]
            h = hashlib.sha256((user[-1] if user else "").encode("utf-8")).digest()
            scores = {d: 1 + h[i] % 5 for i, d in enumerate(self.DIMS)}
            text = json.dumps({"dimension_scores": scores, "flags": [], "tags": {"topic": f"t{h[9] % 7}"},
                               "rationale": f"r{h[8]}", "recommendation": ["keep"]})
            out.append(Generation(text, sum(len(content_text(m.get("content"))) for m in messages) // 4,
                                  len(text) // 4, "stop"))
        return out

    def embed(self, texts):
        import hashlib

        return [[b / 255.0 for b in hashlib.sha256(t.encode("utf-8")).digest()[:16]] for t in texts]


def create_app(engine, model_name: str, max_batch: int = 32, latency: float = 0.0):
    """``latency``: seconds every chat answer waits before it is sent (without holding the engine), as
    a real server's generation time would, so that clients keeping several requests in flight gain."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse, PlainTextResponse

    from data_juicer.models.llm.engine import content_text

    app = FastAPI()
    batcher = _Batcher(engine, max_batch)
    state = {"faults": [], "requests": [], "in_flight": 0, "max_in_flight": 0, "count": 0, "gen": 0}

    def take_fault(body: dict, skip_sleep: bool = False) -> Optional[dict]:
        text = "\n".join(content_text(m.get("content")) for m in body.get("messages", []))
        if not text:
            text = str(body.get("input", ""))
        for f in state["faults"]:
            if (f.get("match") and f["match"] not in text) or (skip_sleep and f.get("kind") == "sleep"):
                continue
            if f.get("times", 1) > 0:
                f["times"] = f.get("times", 1) - 1
                if f["times"] == 0:
                    state["faults"].remove(f)
            return f
        return None

    async def next_fault(body: dict) -> Optional[dict]:
        f = take_fault(body)
        if f is not None and f.get("kind") == "sleep":  # a delay, then whatever comes next
            gen = state["gen"]
            await asyncio.sleep(float(f.get("seconds", 1)))
            # after a reset during the wait (its client gave up; a later test queued faults) take none
            f = take_fault(body, skip_sleep=True) if state["gen"] == gen else None
        return f

    async def misbehave(f: Optional[dict]):
        if f is None:
            return None
        kind = f.get("kind")
        if kind == "status":
            code = int(f.get("status", 500))
            headers = {"Retry-After": str(f["retry_after"])} if "retry_after" in f else None
            return JSONResponse({"error": {"message": f"injected HTTP {code}", "code": code}}, status_code=code,
                                headers=headers)
        if kind == "bad_json":
            return PlainTextResponse("<html>not json</html>", status_code=200)
        if kind == "die":
            os._exit(3)
        return None

    @app.middleware("http")
    async def count_in_flight(request: Request, call_next):
        api = request.url.path.startswith("/v1/")
        if api:
            state["in_flight"] += 1
            state["count"] += 1
            state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
            if state.get("first_at") is None:
                state["first_at"] = time.time()
        try:
            return await call_next(request)
        finally:
            if api:
                state["in_flight"] -= 1
                state["last_done_at"] = time.time()

    @app.get("/health")
    async def health():
        return {"status": "ok"}

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "local"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        body = await request.json()
        state["requests"].append(body)
        f = await next_fault(body)
        early = await misbehave(f)
        if early is not None:
            return early
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            return JSONResponse({"error": {"message": "`messages` must be a non-empty list"}}, status_code=400)
        if f is not None and f.get("kind") == "content":
            text, pt, ct, fr = str(f.get("content", "")), 0, 0, "stop"
        else:
            if latency:
                await asyncio.sleep(latency)
            params = {k: v for k, v in body.items() if k not in ("messages", "model", "stream", "n")}
            try:
                if getattr(engine, "instant", False):  # no batching wait for an engine that costs nothing
                    g = engine.generate([msgs], [params])[0]
                else:
                    g = await batcher.submit(asyncio.get_running_loop(), msgs, params)
            except Exception as e:
                return JSONResponse({"error": {"message": f"{type(e).__name__}: {e}"}}, status_code=500)
            text, pt, ct, fr = g.text, g.prompt_tokens, g.completion_tokens, g.finish_reason
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model") or model_name,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": fr}],
                "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}}

    @app.post("/v1/embeddings")
    async def embeddings(request: Request):
        body = await request.json()
        state["requests"].append(body)
        early = await misbehave(await next_fault(body))
        if early is not None:
            return early
        inp = body.get("input")
        texts = [inp] if isinstance(inp, str) else list(inp or [])
        vecs = await asyncio.get_running_loop().run_in_executor(None, engine.embed, texts)
        return {"object": "list", "model": body.get("model") or model_name,
                "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vecs)]}

    @app.post("/_test/faults")
    async def faults(request: Request):
        state["faults"].extend((await request.json()).get("faults", []))
        return {"faults": len(state["faults"])}

    @app.post("/_test/reset")
    async def reset():
        state.update(faults=[], requests=[], max_in_flight=state["in_flight"], count=0, first_at=None,
                     last_done_at=None, gen=state["gen"] + 1)
        batcher.batch_sizes.clear()
        return {"ok": True}

    @app.get("/_test/requests")
    async def requests_seen():
        return {"requests": state["requests"]}

    @app.get("/_test/stats")
    async def stats():
        return {"count": state["count"], "in_flight": state["in_flight"], "max_in_flight": state["max_in_flight"],
                "batch_sizes": list(batcher.batch_sizes),
                # seconds from the first request's arrival to the last answer (since the last reset)
                "span_s": (state["last_done_at"] - state["first_at"]) if state.get("first_at")
                and state.get("last_done_at") else None}

    return app


def load_model_engine(model: str, threads: int, max_tokens: int, max_batch: int, work: str):
    if model == "rating":
        return RatingEngine()
    import torch

    from data_juicer.models.llm.tiny import build_tiny_chat_model, load_engine

    torch.set_num_threads(threads)
    if model == "tiny":
        model = build_tiny_chat_model(os.path.join(work, "tiny-chat-model"))
    return load_engine(model, default_max_tokens=max_tokens, max_batch=max_batch)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="tiny", help="a Hugging Face model folder, 'tiny' (seeded random) or "
                                                     "'rating' (instant deterministic rating JSON, no model)")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds each chat answer waits (rating/bench)")
    ap.add_argument("--served-name", default="tiny-llm")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--max-tokens", type=int, default=32, help="max_tokens when a request gives none")
    ap.add_argument("--max-batch", type=int, default=32)
    ap.add_argument("--work-dir", default=os.path.join(os.path.expanduser("~"), ".cache", "data_juicer", "llm"))
    a = ap.parse_args(argv)
    import uvicorn

    engine = load_model_engine(a.model, a.threads, a.max_tokens, a.max_batch, a.work_dir)
    uvicorn.run(create_app(engine, a.served_name, a.max_batch, a.latency), host=a.host, port=a.port,
                log_level="warning")


# -- running one in a subprocess ------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """A local server in a subprocess: ``base_url``, the test hooks as methods, ``stop()``."""

    def __init__(self, model: str = "tiny", served_name: str = "tiny-llm", work_dir: Optional[str] = None,
                 max_tokens: int = 32, max_batch: int = 32, threads: int = 1, startup_timeout: float = 300,
                 port: Optional[int] = None, latency: float = 0.0):
        """``port``: a fixed port (e.g. to restart a server where a killed one was), else a free one."""
        self.model, self.served_name = model, served_name
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.args = [sys.executable, "-m", "data_juicer.models.llm.local_server", "--model", model,
                     "--served-name", served_name, "--port", str(self.port), "--max-tokens", str(max_tokens),
                     "--max-batch", str(max_batch), "--threads", str(threads), "--latency", str(latency)]
        if work_dir:
            self.args += ["--work-dir", work_dir]
        self.startup_timeout = startup_timeout
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = os.path.join(work_dir or "/tmp", f"llm_server_{self.port}.log")

    def start(self) -> "ServerProcess":
        import httpx

        os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.args, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.time() + self.startup_timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the local LLM server exited with {self.proc.returncode} while starting; "
                                   f"see {self.log_path}:\n{open(self.log_path).read()[-3000:]}")
            try:
                if httpx.get(self.base_url.rsplit("/v1", 1)[0] + "/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise TimeoutError(f"the local LLM server did not answer within {self.startup_timeout:g}s; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "_log", None):
            self._log.close()

    def kill(self) -> None:
        """Kill it at once (SIGKILL), as a crash would."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _hook(self, method: str, path: str, json=None) -> dict:
        import httpx

        r = httpx.request(method, self.base_url.rsplit("/v1", 1)[0] + path, json=json, timeout=30)
        r.raise_for_status()
        return r.json()

    def reset(self) -> None:
        self._hook("POST", "/_test/reset")

    def faults(self, *faults: dict) -> None:
        """Queue misbehaviours (see the module docstring)."""
        self._hook("POST", "/_test/faults", {"faults": list(faults)})

    def respond(self, content: str, match: Optional[str] = None, times: int = 10 ** 9) -> None:
        """Answer requests (whose prompt contains ``match``) with ``content`` instead of generating."""
        self.faults({"kind": "content", "content": content, "match": match, "times": times})

    def requests(self) -> list[dict]:
        return self._hook("GET", "/_test/requests")["requests"]

    def stats(self) -> dict:
        return self._hook("GET", "/_test/stats")

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


if __name__ == "__main__":
    main()
