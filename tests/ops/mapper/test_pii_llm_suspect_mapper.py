from data_juicer.ops.mapper.pii_llm_suspect_mapper import PiiLlmSuspectMapper, heuristic_trigger, name_cue
from data_juicer.utils.constant import Fields
from tests.llm_fixtures import api_params, llm_server  # noqa: F401

ANSWER = ('```json\n{"suspected": [{"field": "text", "category": "phone", "evidence": "13812345678"}], '
          '"likely_clean": false}\n```')


def test_gate_audit_and_evidence_redaction(llm_server):
    llm_server.respond(ANSWER)
    op = PiiLlmSuspectMapper(api_model="tiny-llm", redaction_mode="evidence", **api_params(llm_server))
    out = op.process_batched({"text": ["call me at 13812345678 please", "a plain harmless sentence", ""]})
    meta = out[Fields.meta]
    assert meta[0]["pii_llm_suspect"] == {
        "suspected": [{"field": "text", "category": "phone", "evidence": "13812345678"}], "likely_clean": False,
        "fields_inspected": ["text"], "redaction_mode": "evidence", "redaction_applied": True}
    assert out["text"][0] == "call me at [LLM_PII_SUSPECT_REDACTED] please"
    assert meta[1]["pii_llm_suspect"] == {"skipped": True, "reason": "heuristic_gate", "fields_inspected": ["text"],
                                          "likely_clean": True}
    assert meta[2]["pii_llm_suspect"]["reason"] == "no_inspectable_text"
    (req,) = llm_server.requests()
    assert req["max_tokens"] == 512 and req["temperature"] == 0.1
    assert req["messages"][1]["content"].endswith("### field:text\ncall me at 13812345678 please")


def test_unparsed_answer_is_recorded_in_meta(llm_server):
    llm_server.respond("sorry, no")
    op = PiiLlmSuspectMapper(api_model="tiny-llm", gate_mode="always", preferred_output_lang="en",
                             **api_params(llm_server))
    out = op.process_batched({"text": ["harmless text here"], "messages": [[{"role": "user", "content": "hi"}]]})
    meta = out[Fields.meta][0]
    assert meta["pii_llm_suspect"] == {"error": "json_parse_failed", "fields_inspected": ["text", "messages_excerpt"]}
    assert meta["pii_llm_suspect_raw"] == "sorry, no"
    assert llm_server.stats()["count"] == 2  # try_num=2
    assert "compliance" in llm_server.requests()[0]["messages"][0]["content"]


def test_whole_field_redaction_of_messages(llm_server):
    llm_server.respond('{"suspected": [{"field": "messages_excerpt", "category": "name", "evidence": "x"}]}')
    op = PiiLlmSuspectMapper(api_model="tiny-llm", gate_mode="always", redaction_mode="whole_field",
                             inspect_keys=["query"], **api_params(llm_server))
    out = op.process_batched({"query": ["q"], "messages": [[{"role": "user", "content": "我叫张三"}]]})
    assert out["messages"] == [[{"role": "user", "content": "[LLM_PII_SUSPECT_REDACTED]"}]]
    assert out[Fields.meta][0]["pii_llm_suspect"]["likely_clean"] is False


def test_gate_rules():
    assert heuristic_trigger("mail me: bob@example.com")
    assert heuristic_trigger("api_key = abc")
    assert not heuristic_trigger("hello there friend")
    assert name_cue("联系人：王小明，请回电") and name_cue("Met Dr. Smith today")
    assert not name_cue("the weather is nice")
