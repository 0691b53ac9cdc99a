import pytest

from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import build, sent

NAME = "most_relevant_entities_aggregator"
P = {"entity": "孙悟空", "query_entity_type": "人物"}


def group(*docs):
    return {"text": ["t"] * len(docs), "__dj__meta__": [{"event_description": d} for d in docs]}


def test_prompt_parse_and_token_limit(llm_server):  # noqa: F811
    llm_server.respond("## 分析\n唐僧是师父。\n## 列表\n唐僧，猪八戒, 沙僧")
    out = build(NAME, llm_server, max_token_num=16, **P).process_single(group("唐僧收徒", "八戒偷懒", "x " * 40))
    assert out["__dj__batch_meta__"] == {"most_relevant_entities": ["唐僧", "猪八戒", "沙僧"]}
    (msgs,) = sent(llm_server)
    assert "不要包含与孙悟空属于同一人物的人物" in msgs[0]["content"]
    assert msgs[1]["content"] == "`孙悟空`的相关文档：\n唐僧收徒\n\n八戒偷懒\n\n与`孙悟空`最相关的一些`人物`：\n"


def test_no_list_raises(llm_server):  # noqa: F811
    from data_juicer.models.llm import LLMResponseError

    llm_server.respond("## 分析\n没有列表")
    with pytest.raises(LLMResponseError):
        build(NAME, llm_server, try_num=2, **P).process_single(group("a"))
    assert len(sent(llm_server)) == 2
