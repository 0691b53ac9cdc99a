from data_juicer.ops.mapper.optimize_query_mapper import OptimizeQueryMapper
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_whole_answer_is_the_new_query(llm_server):
    llm_server.respond("\n更具体的问题？\n")
    op = OptimizeQueryMapper(api_or_hf_model="tiny-llm", is_hf_model=False, **api_params(llm_server))
    assert op.process_batched({"query": ["q"], "response": ["a"]})["query"] == ["更具体的问题？"]
    assert "【问题】" in llm_server.requests()[0]["messages"][0]["content"]
