import pytest

from data_juicer.ops.mapper.text_tagging_by_prompt_mapper import TextTaggingByPromptMapper
from data_juicer.utils.constant import Fields
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_tags_from_server(llm_server):
    llm_server.respond(" 数学 ")
    op = TextTaggingByPromptMapper(hf_model="tiny-llm", tag_list=["数学", "代码"], **api_params(llm_server))
    out = op.process_batched({"text": ["1+1=?"]})
    assert out[Fields.text_tags] == [["数学"]]
    content = llm_server.requests()[0]["messages"][0]["content"]
    assert "备选的分类包括：['数学', '代码']" in content and "1+1=?" in content


def test_default_engine_needs_vllm_or_model():
    with pytest.raises(Exception, match="vllm|Qwen"):
        TextTaggingByPromptMapper()
