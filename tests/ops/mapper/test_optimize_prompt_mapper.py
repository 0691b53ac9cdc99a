from data_juicer.ops.mapper.optimize_prompt_mapper import OptimizePromptMapper
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_new_prompts_become_rows(llm_server):
    llm_server.faults({"kind": "content", "content": "nothing useful", "times": 1},
                      {"kind": "content", "content": "【提示词】\n新提示一\n【其他】", "times": 1})
    llm_server.respond("【提示词】新提示二")
    op = OptimizePromptMapper(api_or_hf_model="tiny-llm", gen_num=2, max_example_num=2, **api_params(llm_server))
    out = op.process_batched({"prompt": ["p1", "p2"], "id": [1, 2]})
    assert out == {"prompt": ["p1", "p2", "新提示一", "新提示二"], "id": [1, 2, 1, 1]}
    reqs = llm_server.requests()
    assert len(reqs) == 3
    # the second generation sees the first new prompt among its examples
    assert "【提示词】\n新提示一\n" in reqs[2]["messages"][1]["content"]


def test_replace_originals(llm_server):
    llm_server.respond("【提示词】x")
    op = OptimizePromptMapper(api_or_hf_model="tiny-llm", gen_num=1, keep_original_sample=False,
                              **api_params(llm_server))
    assert op.process_batched({"prompt": ["p1"], "id": [7]}) == {"prompt": ["x"], "id": [7]}
