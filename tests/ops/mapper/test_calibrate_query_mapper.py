from data_juicer.ops.mapper.calibrate_query_mapper import CalibrateQueryMapper
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_query_only(llm_server):
    llm_server.respond(" 新问题 ")
    op = CalibrateQueryMapper(api_model="tiny-llm", **api_params(llm_server))
    assert op.process_batched({"text": ["t"], "query": ["q"], "response": ["a"]}) == {
        "text": ["t"], "query": ["新问题"], "response": ["a"]}
