import pytest

from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import build, sent

NAME = "meta_tags_aggregator"


def group(*tags):
    return {"text": ["t"] * len(tags), "__dj__meta__": [{"dialog_sentiment_labels": t} for t in tags]}


def test_counts_prompt_and_mapping(llm_server):  # noqa: F811
    llm_server.respond("## 标签合并：\n** 开心归类为积极 **\n** 高兴归类为积极 **\n** 焦虑归类为消极 **\n")
    out = build(NAME, llm_server, target_tags=["积极", "消极", "其他"]).process_single(
        group(["开心", "焦虑"], "高兴", ["开心", "无聊"]))
    assert [m["dialog_sentiment_labels"] for m in out["__dj__meta__"]] == [["积极", "消极"], "积极", ["积极", "无聊"]]
    (msgs,) = sent(llm_server)
    assert msgs[1]["content"] == ("合并后的标签应限定在[积极, 消极, 其他]中。\n| 合并前标签 | 频次 |\n| ------ | ------ |\n"
                                  "| 开心 | 2 |\n| 焦虑 | 1 |\n| 高兴 | 1 |\n| 无聊 | 1 |")


def test_bad_tags_are_left_and_no_mapping_raises(llm_server):  # noqa: F811
    from data_juicer.models.llm import LLMResponseError

    bad = group(["a"], 3)
    assert build(NAME, llm_server).process_single(bad) == bad and sent(llm_server) == []
    llm_server.respond("都差不多")
    with pytest.raises(LLMResponseError, match="都差不多"):
        build(NAME, llm_server, try_num=2).process_single(group("a", "b"))
    assert len(sent(llm_server)) == 2
