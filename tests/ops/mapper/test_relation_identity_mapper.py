import pytest

from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import assert_ledger_has_raw, build, run_rows, sent

NAME = "relation_identity_mapper"
P = {"source_entity": "孙悟空", "target_entity": "唐僧"}


def test_prompt_and_pattern(llm_server):  # noqa: F811
    llm_server.respond("分析推理：唐僧收悟空为徒。\n所以唐僧是孙悟空的：师父\n")
    out = run_rows(build(NAME, llm_server, **P), [{"text": "唐僧收了悟空。"}])
    assert out[0]["__dj__meta__"]["role_relation"] == "师父"
    (msgs,) = sent(llm_server)
    assert "唐僧是孙悟空的什么人" in msgs[0]["content"] and "所以唐僧是孙悟空的：..." in msgs[0]["content"]
    assert msgs[1]["content"] == "关于孙悟空和唐僧的文本信息：\n```\n唐僧收了悟空。\n```\n"


def test_loose_fallback_and_retry(llm_server):  # noqa: F811
    llm_server.respond("我不确定。", times=1)
    llm_server.respond("推理如上。\n因此二者的关系是：师徒。\n")
    out = run_rows(build(NAME, llm_server, **P), [{"text": "x"}])
    assert out[0]["__dj__meta__"]["role_relation"] == "师徒" and len(sent(llm_server)) == 2


def test_entities_are_required():
    from data_juicer.ops.registry import OPERATORS

    with pytest.raises(ValueError, match="source_entity"):
        OPERATORS.get(NAME)(api_endpoint="http://127.0.0.1:1/v1")


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, dict(P, try_num=1), [{"id": 1, "text": "t"}])
