from data_juicer.ops.mapper.calibrate_response_mapper import CalibrateResponseMapper
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_response_only_and_custom_pattern(llm_server):
    llm_server.respond(" 新回答 ")
    op = CalibrateResponseMapper(api_model="tiny-llm", **api_params(llm_server))
    assert op.process_batched({"text": ["t"], "query": ["q"], "response": ["a"]})["response"] == ["新回答"]
    llm_server.reset()
    llm_server.respond("A: x B: final")
    custom = CalibrateResponseMapper(api_model="tiny-llm", output_pattern=r"A: (\w+) B: (\w+)",
                                     **api_params(llm_server))
    assert custom.process_batched({"text": ["t"], "query": ["q"], "response": ["a"]})["response"] == ["final"]
