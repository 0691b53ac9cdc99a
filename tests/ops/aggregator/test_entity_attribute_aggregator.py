import pytest

from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import build, sent

NAME = "entity_attribute_aggregator"
P = {"entity": "孙悟空", "attribute": "出身"}


def group(*docs):
    return {"text": ["t"] * len(docs), "__dj__meta__": [{"event_description": d} for d in docs]}


def test_prompt_parse_and_write(llm_server):  # noqa: F811
    llm_server.respond("# 孙悟空\n## 出身\n石头里蹦出来的猴王。\n")
    out = build(NAME, llm_server, word_limit=50, **P).process_single(group("花果山", "石猴出世"))
    assert out["__dj__batch_meta__"] == {"entity_attribute": "石头里蹦出来的猴王。"}
    (msgs,) = sent(llm_server)
    assert "**50字以内**" in msgs[0]["content"] and "总结`孙悟空`的`出身`" in msgs[0]["content"]
    assert msgs[1]["content"] == "`孙悟空`的相关文档：\n花果山\n\n石猴出世\n\n`孙悟空`的`出身`总结：\n"


def test_groups_are_merged_by_the_nested_summary(llm_server):  # noqa: F811
    llm_server.respond("MERGED", match="文档碎片")
    llm_server.respond("# 孙悟空\n## 出身\n部分一", match="d1")
    llm_server.respond("# 孙悟空\n## 出身\n部分二", match="d3")
    docs = [f"d{i} " + "x " * 30 for i in range(1, 5)]
    out = build(NAME, llm_server, max_token_num=70, **P).process_single(group(*docs))
    assert out["__dj__batch_meta__"]["entity_attribute"] == "MERGED"
    assert len(sent(llm_server)) == 3 and "部分一" in sent(llm_server)[2][1]["content"]


def test_missing_heading_raises_and_params_required(llm_server):  # noqa: F811
    from data_juicer.models.llm import LLMResponseError
    from data_juicer.ops.registry import OPERATORS

    llm_server.respond("孙悟空是石猴。")
    with pytest.raises(LLMResponseError, match="孙悟空是石猴"):
        build(NAME, llm_server, try_num=2, **P).process_single(group("a"))
    assert len(sent(llm_server)) == 2
    with pytest.raises(ValueError, match="attribute"):
        OPERATORS.get(NAME)(entity="x")
