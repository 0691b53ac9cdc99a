"""The api backend against the local OpenAI-compatible server over real HTTP."""
import json
import re
import time

import pytest

from data_juicer.models.llm import (LLMRequestError, LLMResponseError, build_chat_backend, parse_batch_with_retry,
                                    parse_with_retry)
from tests.llm_fixtures import llm_server, llm_server_factory  # noqa: F401


def _backend(srv, **kw):
    mp = dict({"base_url": srv.base_url}, **kw.pop("model_params", {}))
    return build_chat_backend("api", srv.served_name, model_params=mp, **kw)


def _chat(text):
    return [{"role": "user", "content": text}]


def test_batch_sends_each_prompt_and_keeps_order(llm_server):
    llm_server.respond("answer A", match="prompt-a")
    llm_server.respond("answer B", match="prompt-b")
    b = _backend(llm_server, sampling_params={"temperature": 0.0})
    out = b.chat([_chat("prompt-b"), _chat("prompt-a"), _chat("prompt-b")])
    assert out == ["answer B", "answer A", "answer B"]
    reqs = llm_server.requests()
    assert sorted(r["messages"][0]["content"] for r in reqs) == ["prompt-a", "prompt-b", "prompt-b"]
    assert all(r["model"] == "tiny-llm" and r["temperature"] == 0.0 for r in reqs)


def test_real_generation_and_usage(llm_server):
    b = _backend(llm_server)
    text = b.chat_one(_chat("hello"), max_tokens=5)
    assert isinstance(text, str)
    assert b.last_response["usage"]["completion_tokens"] <= 5
    assert b.last_response["usage"]["prompt_tokens"] > 0


@pytest.mark.parametrize("limit,expected", [(1, 1), (4, 4)])
def test_concurrency_limit_is_the_servers_max_in_flight(llm_server, limit, expected):
    llm_server.faults({"kind": "sleep", "seconds": 0.4, "times": 8})
    llm_server.respond("ok")
    b = _backend(llm_server, concurrency=limit)
    t = time.time()
    assert b.chat([_chat(f"q{i}") for i in range(8)]) == ["ok"] * 8
    assert llm_server.stats()["max_in_flight"] == expected
    assert time.time() - t >= 0.4 * 8 / limit - 0.1


def test_all_requests_in_flight_at_once_up_to_the_limit(llm_server):
    llm_server.faults({"kind": "sleep", "seconds": 0.5, "times": 12})
    llm_server.respond("ok")
    b = _backend(llm_server, concurrency=16)
    b.chat([_chat(f"q{i}") for i in range(12)])
    assert llm_server.stats()["max_in_flight"] == 12


def test_429_and_500_are_retried_with_backoff(llm_server):
    llm_server.faults({"kind": "status", "status": 429, "retry_after": 0.2, "times": 1},
                      {"kind": "status", "status": 503, "times": 1})
    llm_server.respond("fine")
    b = _backend(llm_server, max_retries=3)
    assert b.chat_one(_chat("x")) == "fine"
    assert llm_server.stats()["count"] == 3


def test_retries_exhausted_is_a_request_error(llm_server):
    llm_server.faults({"kind": "status", "status": 500, "times": 5})
    b = _backend(llm_server, max_retries=1)
    with pytest.raises(LLMRequestError, match=r"failed after 2 attempt\(s\): HTTP 500") as e:
        b.chat_one(_chat("x"))
    assert e.value.status == 500
    assert llm_server.stats()["count"] == 2


def test_4xx_is_not_retried(llm_server):
    llm_server.faults({"kind": "status", "status": 401, "times": 3})
    b = _backend(llm_server, max_retries=3)
    with pytest.raises(LLMRequestError, match="refused the request: HTTP 401"):
        b.chat_one(_chat("x"))
    assert llm_server.stats()["count"] == 1


def test_timeout(llm_server):
    llm_server.faults({"kind": "sleep", "seconds": 3, "times": 1})
    b = _backend(llm_server, timeout=0.5, max_retries=0)
    t = time.time()
    with pytest.raises(LLMRequestError, match=r"timed out after 0.5s"):
        b.chat_one(_chat("x"))
    assert time.time() - t < 2.5


def test_non_json_body_is_an_error_naming_it(llm_server):
    llm_server.faults({"kind": "bad_json", "times": 1})
    with pytest.raises(LLMRequestError, match="not JSON: '<html>not json</html>'"):
        _backend(llm_server).chat_one(_chat("x"))


def test_response_path(llm_server):
    llm_server.respond("zzz")
    b = _backend(llm_server, response_path="choices.0.finish_reason")
    assert b.chat_one(_chat("x")) == "stop"
    b = _backend(llm_server, response_path="choices.3.message")
    with pytest.raises(LLMRequestError, match="nothing at response_path 'choices.3.message'"):
        b.chat_one(_chat("x"))


def test_endpoint_forms(llm_server, monkeypatch):
    llm_server.respond("e")
    full = build_chat_backend("api", "m", endpoint=llm_server.base_url + "/chat/completions")
    assert full.chat_one(_chat("x")) == "e"
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url + "/")
    env = build_chat_backend("api", "m", endpoint="/chat/completions")
    assert env.url == llm_server.base_url + "/chat/completions"
    assert env.chat_one(_chat("x")) == "e"
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        build_chat_backend("api", "m")


def test_key_from_env_is_sent_but_never_shown(llm_server, monkeypatch):
    monkeypatch.setenv("DJ_API_KEY", "sk-secret-123")
    llm_server.faults({"kind": "status", "status": 500, "times": 2})
    b = _backend(llm_server, max_retries=1)
    assert b._headers["Authorization"] == "Bearer sk-secret-123"
    with pytest.raises(LLMRequestError) as e:
        b.chat_one(_chat("x"))
    assert "sk-secret" not in str(e.value) and "sk-secret" not in repr(b)


def test_parse_retry_on_malformed_output(llm_server):
    llm_server.faults({"kind": "content", "content": "no score here", "times": 2})
    llm_server.respond("Score: 4")

    def parse(t):
        m = re.search(r"Score: (\d)", t)
        return int(m.group(1)) if m else None

    b = _backend(llm_server)
    assert parse_with_retry(b, _chat("rate"), parse, try_num=3) == 4
    assert llm_server.stats()["count"] == 3


def test_never_parses_carries_the_raw_response(llm_server):
    llm_server.respond("still not a score")
    b = _backend(llm_server)
    with pytest.raises(LLMResponseError, match=r"3 attempt\(s\)\); raw response: 'still not a score'") as e:
        parse_with_retry(b, _chat("rate"), lambda t: None, try_num=3)
    assert e.value.raw == "still not a score"
    assert llm_server.stats()["count"] == 3


def test_batch_parse_isolates_failures_and_memo_avoids_resending(llm_server):
    llm_server.respond("bad", match="sample-2")
    llm_server.respond("good")
    b = _backend(llm_server)
    batch = [_chat(f"sample-{i}") for i in range(4)]
    parse = lambda t: t if t == "good" else None  # noqa: E731
    res = parse_batch_with_retry(b, batch, parse, try_num=2, return_exceptions=True)
    assert res[0] == res[1] == res[3] == "good"
    assert isinstance(res[2], LLMResponseError) and res[2].raw == "bad"
    assert llm_server.stats()["count"] == 5  # 4 + one retry of sample-2
    with pytest.raises(LLMResponseError):  # as an op calls it: the batch raises...
        parse_batch_with_retry(b, batch, parse, try_num=2)
    assert llm_server.stats()["count"] == 10
    # ...and the executor's row-by-row retry is answered from the memo, nothing resent
    assert parse_batch_with_retry(b, batch[:1], parse, try_num=2) == ["good"]
    with pytest.raises(LLMResponseError):
        parse_batch_with_retry(b, batch[2:3], parse, try_num=2)
    assert llm_server.stats()["count"] == 10
    # a later identical request is a new request (the memo answers once)
    assert parse_batch_with_retry(b, batch[:1], parse, try_num=2) == ["good"]
    assert llm_server.stats()["count"] == 11


def test_disk_cache_replays_a_rerun(llm_server, tmp_path):
    llm_server.faults({"kind": "content", "content": "malformed", "times": 1})
    llm_server.respond("Score: 2")
    parse = lambda t: t if t.startswith("Score") else None  # noqa: E731
    first = _backend(llm_server, cache_dir=str(tmp_path))
    assert parse_batch_with_retry(first, [_chat("a"), _chat("b")], parse) == ["Score: 2", "Score: 2"]
    n = llm_server.stats()["count"]
    assert n == 3
    again = _backend(llm_server, cache_dir=str(tmp_path))
    assert parse_batch_with_retry(again, [_chat("a"), _chat("b")], parse) == ["Score: 2", "Score: 2"]
    assert llm_server.stats()["count"] == n and again.calls == 0
    other = _backend(llm_server, cache_dir=str(tmp_path), sampling_params={"temperature": 0.7})
    other.chat_one(_chat("a"))  # other params: not a cache hit
    assert llm_server.stats()["count"] == n + 1


def test_json_schema_constrained_decoding_on_the_real_model(llm_server):
    schema = {"type": "object", "properties": {"score": {"type": "integer"}, "label": {"enum": ["yes", "no"]}}}
    b = _backend(llm_server)
    text = b.chat_one(_chat("judge"), max_tokens=40,
                      response_format={"type": "json_schema", "json_schema": {"name": "s", "schema": schema}})
    obj = json.loads(text)
    assert set(obj) == {"score", "label"} and isinstance(obj["score"], int) and obj["label"] in ("yes", "no")


def test_regex_constrained_decoding_on_the_real_model(llm_server):
    text = _backend(llm_server).chat_one(_chat("rate"), max_tokens=12, guided_regex=r"Rating: [1-5]/5")
    assert re.fullmatch(r"Rating: [1-5]/5", text)


def test_embeddings(llm_server):
    vecs = _backend(llm_server).embed(["a cat", "a dog"])
    assert len(vecs) == 2 and len(vecs[0]) == 64 and vecs[0] != vecs[1]


@pytest.mark.slow  # 10 s; tests/llm/test_llm_resume.py covers a server dying mid-run by default
def test_server_dies_mid_batch_then_requests_fail_fast(llm_server_factory):
    srv = llm_server_factory()
    srv.respond("ok", match="early")
    srv.faults({"kind": "die", "match": "boom", "times": 1})
    b = _backend(srv, max_retries=1, concurrency=1, model_params={"down_after": 2})
    out = b.chat([_chat("early 1"), _chat("boom"), _chat("early 2")], return_exceptions=True)
    assert out[0] == "ok"
    assert isinstance(out[1], LLMRequestError) and isinstance(out[2], LLMRequestError)
    assert srv.proc.wait(5) == 3  # the process really exited
    t = time.time()
    with pytest.raises(LLMRequestError, match="is not reachable"):
        b.chat_one(_chat("later"))
    assert time.time() - t < 0.5
