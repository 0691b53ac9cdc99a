import json

import pytest

from data_juicer.ops.mapper.generate_qa_from_examples_mapper import GenerateQAFromExamplesMapper, rouge_l_f
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def _seed(tmp_path):
    p = tmp_path / "seed.jsonl"
    p.write_text(json.dumps({"messages": [{"role": "user", "content": "what is one plus one"},
                                          {"role": "assistant", "content": "two"}]}) + "\n")
    return str(p)


def test_generates_and_filters_by_similarity(llm_server, tmp_path):
    llm_server.respond("【问题】\nhow tall is everest\n【回答】\nabout 8849 metres")
    op = GenerateQAFromExamplesMapper(hf_model="tiny-llm", seed_file=_seed(tmp_path), example_num=1,
                                      **api_params(llm_server))
    out = op.process_batched({"text": ["x"]})
    assert out["query"] == ["how tall is everest"] and out["response"] == ["about 8849 metres"]
    assert out["history"] == [[]]
    assert "【问题】\nwhat is one plus one\n【回答】\ntwo\n" in llm_server.requests()[0]["messages"][1]["content"]
    llm_server.reset()
    llm_server.respond("【问题】what is one plus one【回答】two")  # a copy of the seed: discarded
    out = op.process_batched({"text": ["x"]})
    assert out["query"] == [""] and out["response"] == [""]


def test_rouge_and_seed_errors(tmp_path):
    assert rouge_l_f("a b c d", "a c d e") == pytest.approx(0.75)
    with pytest.raises(ValueError, match="seed_file"):
        GenerateQAFromExamplesMapper(model_params={"base_url": "http://127.0.0.1:9/v1"})
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        GenerateQAFromExamplesMapper(seed_file=str(bad), model_params={"base_url": "http://127.0.0.1:9/v1"})
