import pytest

from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import assert_ledger_has_raw, build, run_rows, sent

NAME = "extract_entity_attribute_mapper"
P = {"query_entities": ["孙悟空"], "query_attributes": ["性格", "本领"]}


def answer(attr, demo=True):
    demos = "### 代表性示例摘录1：\n```\n大闹天宫\n```\n### 代表性示例摘录2：\n```\n  \n```\n" if demo else ""
    return f"# 孙悟空\n## {attr}：\n{attr}的描述\n{demos}"


def test_one_request_per_pair(llm_server):  # noqa: F811
    llm_server.respond(answer("本领"), match="的本领")
    llm_server.respond(answer("性格"), match="的性格")
    out = run_rows(build(NAME, llm_server, **P), [{"text": "西游记"}])
    meta = out[0]["__dj__meta__"]
    assert meta == {"main_entities": ["孙悟空", "孙悟空"], "attributes": ["性格", "本领"],
                    "attribute_descriptions": ["性格的描述", "本领的描述"],
                    "attribute_support_texts": [["大闹天宫"], ["大闹天宫"]]}
    first = sent(llm_server)[0]
    assert "概括孙悟空的性格" in first[0]["content"] and first[1]["content"] == "# 文本\n```\n西游记\n```\n"


def test_require_support_demos(llm_server):  # noqa: F811
    from data_juicer.models.llm import LLMResponseError

    llm_server.respond(answer("性格", demo=False))
    one = {"query_entities": ["孙悟空"], "query_attributes": ["性格"]}
    with pytest.raises(LLMResponseError):
        run_rows(build(NAME, llm_server, try_num=2, **one), [{"text": "x"}])
    assert len(sent(llm_server)) == 2
    out = run_rows(build(NAME, llm_server, require_support_demos=False, **one), [{"text": "x"}])
    assert out[0]["__dj__meta__"]["attribute_support_texts"] == [[]]


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, dict(P, try_num=1), [{"id": 1, "text": "t"}])
