from data_juicer.ops.mapper.optimize_response_mapper import OptimizeResponseMapper
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_whole_answer_is_the_new_response(llm_server):
    llm_server.respond(" 更详细的回答 ")
    op = OptimizeResponseMapper(api_or_hf_model="tiny-llm", is_hf_model=False, **api_params(llm_server))
    assert op.process_batched({"query": ["q"], "response": ["a"]}) == {"query": ["q"], "response": ["更详细的回答"]}
