import pytest
from agent_data import TOOL_ROWS

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields


def make(**kw):
    return OPERATORS.get("tool_success_tagger_mapper")(**kw)


def metas(op, rows):
    return [r.get(Fields.meta) for r in run_ops_on_rows([op], [dict(r) for r in rows])]


# values from Data-Juicer 1.6.1
EXPECTED_DEFAULT = [{'tool_success_count': 0,
  'tool_fail_count': 0,
  'tool_unknown_count': 0,
  'tool_success_ratio': None,
  'tool_results': []},
 {'tool_success_count': 0,
  'tool_fail_count': 0,
  'tool_unknown_count': 0,
  'tool_success_ratio': None,
  'tool_results': []},
 {'tool_success_count': 0,
  'tool_fail_count': 0,
  'tool_unknown_count': 0,
  'tool_success_ratio': None,
  'tool_results': []},
 {'tool_success_count': 0,
  'tool_fail_count': 0,
  'tool_unknown_count': 0,
  'tool_success_ratio': None,
  'tool_results': []},
 {'tool_success_count': 3,
  'tool_fail_count': 3,
  'tool_unknown_count': 3,
  'tool_success_ratio': 0.5,
  'tool_results': [{'content_preview': 'Wrote 120 bytes to a.txt', 'result': 'success'},
                   {'content_preview': 'Error: file not found', 'result': 'error'},
                   {'content_preview': '', 'result': 'unknown'},
                   {'content_preview': '', 'result': 'unknown'},
                   {'content_preview': '{"status": "ok", "data": [1, 2, "中文"]}', 'result': 'success'},
                   {'content_preview': 'Traceback: Exception raised\n'
                                       '{"type": "image_url", "image_url": {"url": "x"}}\n'
                                       'plain block',
                    'result': 'error'},
                   {'content_preview': '{"nested": "permission denied"}', 'result': 'error'},
                   {'content_preview': '', 'result': 'unknown'},
                   {'content_preview': '42', 'result': 'success'}]},
 {'other': 1,
  'tool_success_count': 4,
  'tool_fail_count': 3,
  'tool_unknown_count': 0,
  'tool_success_ratio': 0.5714285714285714,
  'tool_results': [{'content_preview': '调用失败，错误码 500', 'result': 'error'},
                   {'content_preview': '未失败', 'result': 'success'},
                   {'content_preview': 'success', 'result': 'success'},
                   {'content_preview': 'The operation completed with no failures', 'result': 'success'},
                   {'content_preview': 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
                    'result': 'success'},
                   {'content_preview': '找不到', 'result': 'error'},
                   {'content_preview': 'NOT    FOUND here', 'result': 'error'}]},
 {'tool_success_count': 0,
  'tool_fail_count': 2,
  'tool_unknown_count': 0,
  'tool_success_ratio': 0.0,
  'tool_results': [{'content_preview': 'Error: a', 'result': 'error'},
                   {'content_preview': 'failure b', 'result': 'error'}]},
 {'tool_success_count': 0,
  'tool_fail_count': 0,
  'tool_unknown_count': 1,
  'tool_success_ratio': None,
  'tool_results': [{'content_preview': '', 'result': 'unknown'}]}]
EXPECTED_CUSTOM = [{'tool_success_count': 0, 'tool_fail_count': 0, 'tool_unknown_count': 0, 'tool_success_ratio': None},
 {'tool_success_count': 0, 'tool_fail_count': 0, 'tool_unknown_count': 0, 'tool_success_ratio': None},
 {'tool_success_count': 0, 'tool_fail_count': 0, 'tool_unknown_count': 0, 'tool_success_ratio': None},
 {'tool_success_count': 0, 'tool_fail_count': 0, 'tool_unknown_count': 0, 'tool_success_ratio': None},
 {'tool_success_count': 6, 'tool_fail_count': 1, 'tool_unknown_count': 2, 'tool_success_ratio': 0.8571428571428571},
 {'other': 1,
  'tool_success_count': 6,
  'tool_fail_count': 1,
  'tool_unknown_count': 0,
  'tool_success_ratio': 0.8571428571428571},
 {'tool_success_count': 1, 'tool_fail_count': 1, 'tool_unknown_count': 0, 'tool_success_ratio': 0.5},
 {'tool_success_count': 0, 'tool_fail_count': 0, 'tool_unknown_count': 1, 'tool_success_ratio': None}]


def test_matches_data_juicer():
    assert metas(make(), TOOL_ROWS) == EXPECTED_DEFAULT
    custom = make(tool_role_names=["tool", "function"], error_patterns=[r"(?i)fail"], store_per_tool_results=False)
    assert metas(custom, TOOL_ROWS) == EXPECTED_CUSTOM


def test_other_messages_key_and_text_untouched():
    rows = [{"text": "t", "msgs": [{"role": "tool", "content": "ok"}], "messages": [{"role": "tool", "content": "x"}]}]
    out = run_ops_on_rows([make(messages_key="msgs")], rows)
    assert out[0]["text"] == "t"
    assert out[0][Fields.meta]["tool_results"] == [{"content_preview": "ok", "result": "success"}]


def test_success_patterns_do_not_change_labels():
    # as in Data-Juicer: non-empty content without an error match is a success
    rows = [{"messages": [{"role": "tool", "content": "anything"}, {"role": "tool", "content": "boom"}]}]
    meta = metas(make(success_patterns=["^never$"], error_patterns=["boom"]), rows)[0]
    assert [r["result"] for r in meta["tool_results"]] == ["success", "error"]
    assert meta["tool_success_ratio"] == 0.5


def test_non_dict_messages_are_ignored():
    meta = metas(make(), [{"messages": ["tool", 3, {"role": "tool", "content": "fine"}]}])[0]
    assert (meta["tool_success_count"], meta["tool_fail_count"]) == (1, 0)


def test_bad_pattern_is_a_clear_error():
    with pytest.raises(ValueError, match="bad regular expression"):
        make(error_patterns=["(unclosed"])
