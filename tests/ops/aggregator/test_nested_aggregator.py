import pytest

from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import build, run_recipe, sent

NAME = "nested_aggregator"


def group(*docs, key="event_description"):
    return {"text": ["t"] * len(docs), "__dj__meta__": [{key: d} for d in docs], "__dj__batch_meta__": {}}


def test_one_request_for_all_docs_and_quotes_stripped(llm_server):  # noqa: F811
    llm_server.respond('  “"merged story"”  ')
    out = build(NAME, llm_server).process_single(group("a", "b", "c"))
    assert out["__dj__batch_meta__"]["event_description"] == "merged story"
    (msgs,) = sent(llm_server)
    assert msgs[1]["content"] == "文档碎片：\na\n\n文档碎片：\nb\n\n文档碎片：\nc\n\n\n文档总结：\n"
    assert "文档碎片" in msgs[0]["content"]


def test_token_limit_recursion(llm_server):  # noqa: F811
    # each doc alone is over the limit: pairs are summarised, then the two summaries
    llm_server.respond("S12", match="d1")
    llm_server.respond("S34", match="d3")
    llm_server.respond("FINAL", match="S12")
    docs = [f"d{i} " + "word " * 20 for i in range(1, 5)]
    out = build(NAME, llm_server, max_token_num=10, output_key="summary").process_single(group(*docs))
    assert out["__dj__batch_meta__"] == {"summary": "FINAL"}
    assert len(sent(llm_server)) == 3


def test_single_doc_missing_key_and_done(llm_server):  # noqa: F811
    op = build(NAME, llm_server)
    assert op.process_single(group("only"))["__dj__batch_meta__"]["event_description"] == "only"
    assert op.process_single(group("x", key="other"))["__dj__batch_meta__"] == {}
    done = dict(group("a", "b"), __dj__batch_meta__={"event_description": "kept"})
    assert op.process_single(done)["__dj__batch_meta__"]["event_description"] == "kept"
    assert sent(llm_server) == []


def test_empty_answer_raises_with_raw(llm_server):  # noqa: F811
    from data_juicer.models.llm import LLMResponseError

    llm_server.respond('""')
    with pytest.raises(LLMResponseError, match="raw response"):
        build(NAME, llm_server, try_num=2).process_single(group("a", "b"))
    assert len(sent(llm_server)) == 2


def test_end_to_end_after_a_grouper_and_ledger(tmp_path, llm_server):  # noqa: F811
    rows = [{"id": i, "text": "t", "__dj__meta__": {"event_description": f"e{i}"}} for i in range(3)]
    llm_server.respond("ALL")
    params = {"api_model": llm_server.served_name, "api_endpoint": llm_server.base_url}
    rc, out, ledger = run_recipe(tmp_path / "ok", rows, [{"naive_grouper": {}}, {NAME: params}])
    assert rc == 0 and ledger == [] and out[0]["__dj__batch_meta__"] == {"event_description": "ALL"}
    llm_server.reset()
    llm_server.respond("''")
    rc, out, ledger = run_recipe(tmp_path / "bad", rows, [{"naive_grouper": {}}, {NAME: dict(params, try_num=1)}])
    assert rc == 0 and out == [] and [e["op"] for e in ledger] == [NAME]
    assert "raw response: \"''\"" in ledger[0]["message"]
