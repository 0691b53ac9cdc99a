"""Agent-trace samples shared by the agent op tests (also fed to Data-Juicer 1.6.1 to get the
expected values written in the tests)."""

TOOL_ROWS = [
    {"messages": []},
    {"messages": None},
    {"messages": "not a list"},
    {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]},
    {"messages": [
        {"role": "user", "content": "write the file"},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "write_file"}}]},
        {"role": "tool", "content": "Wrote 120 bytes to a.txt"},
        {"role": "TOOL", "content": "Error: file not found"},
        {"role": "tool_use", "content": "   "},
        {"role": "tool", "content": None},
        {"role": "tool", "content": {"status": "ok", "data": [1, 2, "中文"]}},
        {"role": "tool", "content": [{"type": "text", "text": "  Traceback: Exception raised  "},
                                     {"type": "image_url", "image_url": {"url": "x"}}, "plain block", 7]},
        {"role": "tool", "content": [{"type": "text", "text": {"nested": "permission denied"}}]},
        {"role": "tool", "content": []},
        {"role": "tool", "content": 42},
        {"role": "function", "content": "failed"},
    ]},
    {"messages": [
        {"role": "tool", "content": "调用失败，错误码 500"},
        {"role": "tool", "content": "未失败"},
        {"role": "tool", "content": "success"},
        {"role": "tool", "content": "The operation completed with no failures"},
        {"role": "tool", "content": "x" * 300},
        {"role": "tool", "content": "找不到"},
        {"role": "tool", "content": "NOT    FOUND here"},
    ], "__dj__meta__": {"other": 1, "tool_success_count": 99}},
    {"messages": [{"role": "tool", "content": "Error: a"}, {"role": "tool", "content": "failure b"}]},
    {"messages": [{"role": None, "content": "x"}, {"content": "no role"}, {"role": "tool"}]},
]

TOOL_TYPE_ROWS = [
    {},
    {"__dj__meta__": {}},
    {"__dj__meta__": {"agent_tool_types": None}},
    {"__dj__meta__": {"agent_tool_types": "search"}},
    {"__dj__meta__": {"agent_tool_types": []}},
    {"__dj__meta__": {"agent_tool_types": ["search"]}},
    {"__dj__meta__": {"agent_tool_types": ["b", "a", "b", " a ", "c", "", "  ", None, 3, "a"]}},
    {"__dj__meta__": {"agent_tool_types": ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t2"]}},
    {"__dj__meta__": {"agent_tool_types": ["x", "y"], "primary_tool_type": "old", "keep": True}},
    {"__dj__meta__": {"tools": ["q", "r", "r"]}},
]

LONG = "HEAD-" + "0123456789" * 150 + "-TAIL"  # 1510 chars

DIALOG_ROWS = [
    {"messages": [], "choices": []},
    {"messages": None, "choices": [{"message": {"content": "  only a choice  "}}]},
    {"messages": "bad", "choices": [{"delta": {"content": [{"type": "text", "text": "delta text"}]}}]},
    {"messages": [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello!"}],
     "request_id": "  r-1 ", "request_model": "qwen-max", "pt": "20250101", "total_cost_time": 1234},
    {"messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "system", "content": ""},
        {"role": "user", "content": [{"type": "text", "text": "Find /skills/web_search/SKILL.md"}, "more text"]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"function": {"name": "read_file"}}, {"name": "grep"}, {"function_call": {"name": "read_file"}},
            {"function": {"name": ""}}, "junk"]},
        {"role": "tool", "content": "## cron\nfile body"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "let me think"},
                                          {"reasoning_content": "deep"}, {"type": "input_text", "text": "Done."}]},
        {"role": "tool", "content": None},
        {"role": "user", "content": {"value": "", "text": {"content": "nested dict"}}},
        {"role": "assistant", "content": [{"type": "text", "text": ["a", None, "", {"text": "b"}, 3]}]},
        {"role": "observation", "content": "ignored"},
    ], "trace_id": "t-2", "id": 5, "pt": None},
    {"messages": [
        {"role": "tool", "content": "orphan result"},
        {"role": "assistant", "content": "", "tool_use": [{"name": "calc"}]},
        {"role": "tool", "content": "42"},
        {"role": "assistant", "content": "Check 'docs/my_skill/SKILL.md' please. ## Not.Skill\n## 记忆\n"},
    ], "request_id": "", "trace_id": None, "id": "  ", "__dj__meta__": {"prior": "kept"}},
    {"messages": [
        {"role": "user", "content": LONG},
        {"role": "assistant", "content": "calling", "tool_calls": [{"function": {"name": f"t{i}"}} for i in range(12)]},
        {"role": "tool", "content": LONG},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": f"t{i}"}} for i in range(12)]},
        {"role": "user", "content": "short"},
        {"role": "tool", "content": LONG + LONG},
    ]},
    {"messages": [{"role": "assistant", "content": "no user yet"}, {"role": "User", "content": "late user"}],
     "choices": [{"message": {"content": "   "}}, 7, {"message": {"content": "fallback choice"}}]},
]

_Q = "Please analyse the attached quarterly report and list every risk factor you find, with sources. " * 2
BAD_CASE_ROWS = [
    {},
    {"query": None, "response": None, "__dj__meta__": None, "__dj__stats__": None},
    {"query": _Q, "response": "ok", "__dj__meta__": {"tool_fail_count": 1, "tool_success_count": 0,
                                                       "tool_success_ratio": 0.0}},
    {"query": "short", "response": "", "__dj__meta__": {"tool_fail_count": 2, "tool_success_count": 3,
                                                          "tool_success_ratio": 0.6, "total_tokens": 9000,
                                                          "agent_total_cost_time_ms": 120000,
                                                          "agent_request_model": "qwen-max"}},
    {"query": _Q, "response": "   tiny   ", "__dj__meta__": {"tool_success_count": 1, "tool_fail_count": 0,
                                                                "tool_success_ratio": 1.0, "total_tokens": "500",
                                                                "agent_total_cost_time_ms": 10,
                                                                "agent_request_model": "gpt-x"}},
    {"query": "q", "response": "r", "__dj__stats__": {
        "llm_analysis_score": 0.2, "llm_analysis_record": {"recommendation": ["Discard"]},
        "llm_quality_score": 0.25, "llm_quality_record": '{"recommendation": "\\"keep\\""}'}},
    {"query": "q", "response": "r", "__dj__stats__": {
        "llm_analysis_score": 0.26, "llm_analysis_record": '{"recommendation": "discard"}',
        "llm_quality_score": 0.1, "llm_quality_record": "not json",
        "perplexity": 950.5, "llm_difficulty_score": 0.8}},
    {"query": "q", "response": "r", "__dj__stats__": {
        "llm_analysis_score": 0.3, "llm_analysis_record": {"recommendation": "discard"},
        "llm_quality_score": "0.2", "llm_quality_record": {"recommendation": None}, "perplexity": 100},
     "__dj__meta__": {"dialog_sentiment_labels": ["Neutral", "very Frustrated user", "x", "y", "z", "w", "v"],
                      "agent_request_model": "qwen-max"}},
    {"query": "q", "response": "r", "__dj__meta__": {
        "dialog_memory_consistency": {"score": 1}, "dialog_coreference": {"score": "2.0"},
        "dialog_topic_shift": {"score": 1, "skipped": True}, "dialog_error_recovery": {"score": None},
        "dialog_clarification_quality": {"score": "bad"}, "dialog_proactivity": {"score": 5},
        "dialog_non_repetition": {"score": 2, "error": "timeout"}, "agent_trace_coherence": 1,
        "agent_tool_relevance": {"score": 1.5}, "dialog_sentiment_labels": ["负面情绪"]}},
    {"query": "", "response": "", "__dj__meta__": {"tool_success_ratio": None, "tool_fail_count": 0,
                                                     "tool_success_count": 5}},
]

CALIBRATION = {"percentile": 95,
               "default": {"max_total_tokens": 8000, "max_latency_ms": "60000", "perplexity_high_threshold": 90},
               "by_request_model": {"qwen-max": {"max_total_tokens": 10000, "perplexity_high_threshold": "bad"},
                                    "gpt-x": {"max_total_tokens": 100, "max_latency_ms": 5}, "junk": 3}}
