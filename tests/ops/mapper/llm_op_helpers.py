"""Shared helpers of the LLM op tests (dialog / agent / extract mappers, aggregators): run an op on
rows against the local ``llm_server`` fixture, read what it sent, and run it end to end through
``dj-process`` to check the error ledger."""

import glob
import json
import os

import yaml

from data_juicer.ops.registry import OPERATORS


def build(name, server, **params):
    """The op ``name`` talking to ``server`` (the ``llm_server`` fixture) through the ``api`` backend."""
    params.setdefault("api_model", server.served_name)
    return OPERATORS.get(name)(api_endpoint=server.base_url, **params)


def rows_to_batch(rows):
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return {k: [r.get(k) for r in rows] for k in keys}


def batch_to_rows(batch):
    n = len(next(iter(batch.values()))) if batch else 0
    return [{k: batch[k][i] for k in batch} for i in range(n)]


def run_rows(op, rows):
    """``op.process_batched`` over ``rows`` (a deep copy through JSON), back as rows."""
    return batch_to_rows(op.process_batched(rows_to_batch(json.loads(json.dumps(rows)))))


def sent(server):
    """The chat requests the server received: a list of their message lists."""
    return [r["messages"] for r in server.requests() if "messages" in r]


def run_recipe(tmp_path, rows, process, **globals_):
    """``dj-process`` on ``rows``: (exit code, exported rows with their meta/stats, error-ledger entries)."""
    from data_juicer.cli.process import main

    tmp_path.mkdir(parents=True, exist_ok=True)
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    export = tmp_path / "out" / "result.jsonl"
    cfg = {"project_name": "t", "np": 1, "dataset_path": str(data), "export_path": str(export), "process": process}
    cfg.update(globals_)
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(cfg, allow_unicode=True))
    rc = main(["--config", str(recipe)])
    out = [json.loads(x) for x in export.read_text(encoding="utf-8").splitlines() if x.strip()] \
        if export.exists() else []
    stats = export.with_name("result_stats.jsonl")  # __dj__meta__ / __dj__stats__ are exported beside
    if stats.exists():
        extra = [json.loads(x) for x in stats.read_text(encoding="utf-8").splitlines() if x.strip()]
        out = [dict(o, **e) for o, e in zip(out, extra)]
    ledger = []
    for p in glob.glob(os.path.join(str(tmp_path / "out"), "**", "errors.jsonl"), recursive=True):
        ledger += [json.loads(x) for x in open(p, encoding="utf-8") if x.strip()]
    return rc, out, ledger


def assert_ledger_has_raw(tmp_path, server, op_name, params, rows, garbage="no structure at all"):
    """End to end: every answer is ``garbage`` -> each sample is one ledger entry of ``op_name``
    whose message carries the raw answer, and nothing is exported."""
    server.respond(garbage)
    params = dict(params, api_endpoint=server.base_url)
    params.setdefault("api_model", server.served_name)
    rows = [dict({"text": "t"}, **r) for r in rows]  # the executor checks that the text field exists
    rc, out, ledger = run_recipe(tmp_path, rows, [{op_name: params}])
    assert rc == 0
    assert out == []
    assert len(ledger) == len(rows)
    for e in ledger:
        assert e["op"] == op_name and e["error_type"] == "LLMResponseError"
        assert garbage in e["message"]
    return ledger


DIALOG_ROW = {"dialog_history": [["Book me a table", "For how many people?"], ["Four, tonight", "Done: 19:00."]],
              "query": "Four, tonight", "response": "Done: 19:00.", "text": "user: book\nassistant: done"}


def check_score_op(server, name, meta_key, eval_kind, rubric_words, row=None, **params):
    """The 1-5 judges: prompt, parse, clamp, retry, try_num exhausted, skip."""
    import pytest

    from data_juicer.models.llm import LLMResponseError

    row = dict(row or DIALOG_ROW)
    server.respond('{"score": 4, "reason": "fine"}')
    out = run_rows(build(name, server, **params), [row])
    assert out[0]["__dj__meta__"][meta_key] == {"score": 4.0, "reason": "fine", "eval_kind": eval_kind}
    (msgs,) = sent(server)
    assert [m["role"] for m in msgs] == ["system", "user"]
    for w in rubric_words:
        assert w in msgs[0]["content"]
    assert '{"score": <an integer from 1 to 5>' in msgs[0]["content"]
    # a sample already judged is skipped; overwrite judges it again
    server.reset()
    server.respond('{"score": 2, "reason": "again"}')
    done = run_rows(build(name, server, **params), out)
    assert done[0]["__dj__meta__"][meta_key]["score"] == 4.0 and sent(server) == []
    again = run_rows(build(name, server, overwrite=True, **params), out)
    assert again[0]["__dj__meta__"][meta_key]["score"] == 2.0
    # malformed, then fenced JSON with an out-of-range score: retried once, clamped to 5
    server.reset()
    server.respond("I think it is good.", times=1)
    server.respond('```json\n{"score": 9, "reason": "great"}\n```')
    out = run_rows(build(name, server, **params), [row])
    assert out[0]["__dj__meta__"][meta_key]["score"] == 5.0
    assert len(sent(server)) == 2
    # a non-numeric score never parses: try_num requests, then the raw answer in the error
    server.reset()
    server.respond('{"score": "high", "reason": "x"}')
    with pytest.raises(LLMResponseError) as e:
        run_rows(build(name, server, try_num=3, **params), [row])
    assert '{"score": "high"' in str(e.value) and len(sent(server)) == 3
    return msgs


TWO_TURNS = {"history": [["u1", "a1"]], "query": "u2", "response": "a2"}


def check_turn_op(server, name, prefixes, answers, expect, cand_param=None, **params):
    """The per-turn labellers on a two-turn dialog: (analysis prefix, value prefix), the two
    answers, the expected meta; the second prompt carries the first turn and what was found."""
    import pytest

    from data_juicer.models.llm import LLMResponseError

    a_pre, v_pre = prefixes
    server.respond(answers[1], match="u2")
    server.respond(answers[0], match="u1")
    if cand_param:
        params[cand_param] = ["c1", "c2"]
    out = run_rows(build(name, server, **params), [TWO_TURNS])
    meta = out[0]["__dj__meta__"]
    for k, v in expect.items():
        assert meta[k] == v, (k, meta[k])
    first, second = sent(server)
    assert a_pre in first[0]["content"] and "【输出语言】" in first[0]["content"]
    cand = "备选" + v_pre[:2] + "类别：[c1,c2]" if cand_param else ""
    assert first[1]["content"] == cand + "用户：u1\n"
    a1 = answers[0].split(a_pre + "：")[1].split("\n")[0]
    assert second[1]["content"].startswith(cand + "用户：u1\n" + a_pre + "：" + a1 + "\n" + v_pre + "：")
    assert second[1]["content"].endswith("LLM：a1\n用户：u2\n")
    # no analysis line: sent again; never: LLMResponseError with the raw answer
    server.reset()
    server.respond("nothing useful", times=1)
    server.respond(answers[0])
    run_rows(build(name, server, **params), [{"query": "u1", "response": "a1"}])
    assert len(sent(server)) == 2
    server.reset()
    server.respond("still nothing useful")
    with pytest.raises(LLMResponseError, match="still nothing useful"):
        run_rows(build(name, server, try_num=2, **params), [{"query": "u1", "response": "a1"}])
    assert len(sent(server)) == 2
    # a sample with both keys is skipped; max_round=0 leaves the history out
    server.reset()
    run_rows(build(name, server, **params), out)
    assert sent(server) == []
    server.respond(answers[0])
    run_rows(build(name, server, max_round=0, **params), [TWO_TURNS])
    assert sent(server)[1][1]["content"] == cand + "用户：u2\n"
