"""LLM ops on Ray: a filter, a mapper and an aggregator over a grouper give the same output as
on the default executor, against the same local OpenAI-compatible server (real HTTP from the Ray
workers); an op with an in-process engine (hf / vllm) declares it, so it runs in an actor pool."""
import json

from tests.conftest import read_jsonl
from tests.llm_fixtures import llm_server  # noqa: F401

KEEP = ('{"dimension_scores": {"accuracy": 5, "grammar": 5, "informativeness": 4, "coherence": 4}, '
        '"flags": [], "rationale": "ok", "recommendation": ["keep"]}')
DROP = '{"dimension_scores": {"accuracy": 1, "grammar": 2, "informativeness": 1, "coherence": 1}}'


def _rows():
    return [{"id": i, "text": f"ROW-{'DROP' if i % 3 == 2 else 'KEEP'} text {i}", "query": f"qid-{i:02d}",
             "response": f"aid-{i:02d}"} for i in range(8)]


def test_llm_filter_mapper_aggregator_same_on_ray(run_both, llm_server):  # noqa: F811
    for i in range(8):
        llm_server.respond(f"【问题】\nQ{i:02d} new\n【回答】\nA{i:02d} new", match=f"qid-{i:02d}\n")
    llm_server.respond(KEEP, match="ROW-KEEP")
    llm_server.respond(DROP, match="ROW-DROP")
    llm_server.respond("## 分析\n略\n## 列表\n甲，乙", match="相关文档")
    srv = {"base_url": llm_server.base_url, "max_retries": 1}
    process = [
        {"llm_quality_score_filter": {"api_or_hf_model": "tiny-llm", "model_params": srv}},
        {"optimize_qa_mapper": {"api_or_hf_model": "tiny-llm", "is_hf_model": False, "model_params": srv}},
    ]
    default, ray = run_both(_rows(), process)
    a, b = read_jsonl(default / "result.jsonl"), read_jsonl(ray / "result.jsonl")
    assert a == b
    kept = [i for i in range(8) if i % 3 != 2]
    assert [r["id"] for r in a] == kept
    assert [(r["query"], r["response"]) for r in a] == [(f"Q{i:02d} new", f"A{i:02d} new") for i in kept]
    sa, sb = read_jsonl(default / "result_stats.jsonl"), read_jsonl(ray / "result_stats.jsonl")
    assert sa == sb and [s["__dj__stats__"]["llm_quality_score"] for s in sa] == [0.9] * len(kept)
    sent = [r["messages"][-1]["content"] for r in llm_server.requests()]
    # each executor asked once per sample and op: 8 scores, then 6 rewrites of the kept pairs
    assert sum("ROW-" in m for m in sent) == 16 and sum("qid-" in m for m in sent) == 12


def test_llm_aggregator_over_grouper_same_on_ray(run_both, llm_server, tmp_path):  # noqa: F811
    llm_server.respond("## 分析\n略\n## 列表\n唐僧，猪八戒, 沙僧")
    rows = [{"text": f"t{i}", "__dj__meta__": {"event_description": f"事件{i}"}} for i in range(5)]
    process = [{"naive_grouper": {}},
               {"most_relevant_entities_aggregator": {"api_model": "tiny-llm", "entity": "孙悟空",
                                                      "query_entity_type": "人物",
                                                      "api_endpoint": llm_server.base_url}}]
    default, ray = run_both(rows, process)

    def exported(folder):  # the rows, and the stats/meta file beside them when there is one
        stats = folder / "result_stats.jsonl"
        return read_jsonl(folder / "result.jsonl") + (read_jsonl(stats) if stats.exists() else [])

    a, b = exported(default), exported(ray)
    assert a == b
    assert "唐僧" in json.dumps(a, ensure_ascii=False) and "沙僧" in json.dumps(a, ensure_ascii=False)
    sent = [r["messages"][-1]["content"] for r in llm_server.requests()]
    assert len(sent) == 2 and sent[0] == sent[1]  # one group, one request per executor, the same prompt
    assert all(f"事件{i}" in sent[0] for i in range(5))


def test_engine_ops_run_in_actor_pools_api_ops_as_tasks(tmp_path):
    from data_juicer.core.backends.ray import needs_actor
    from data_juicer.models.llm.tiny import build_tiny_chat_model
    from data_juicer.ops.filter.llm_quality_score_filter import LLMQualityScoreFilter

    folder = build_tiny_chat_model(str(tmp_path / "tiny"))
    hf = LLMQualityScoreFilter(api_or_hf_model=folder, is_hf_model=True)
    api = LLMQualityScoreFilter(api_or_hf_model="m", model_params={"base_url": "http://127.0.0.1:9/v1"})
    assert (hf.llm_kind, needs_actor(hf)) == ("hf", True)
    assert (api.llm_kind, needs_actor(api)) == ("api", False)
