import hashlib
import json

import pytest
from agent_data import DIALOG_ROWS

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.ops.mapper.agent_dialog_normalize_mapper import compress_head_tail
from data_juicer.utils.constant import Fields


def make(**kw):
    return OPERATORS.get("agent_dialog_normalize_mapper")(**kw)


CONFIGS = {'default': {},
           'caps': {'history_tool_result_max_chars': 700,
                    'history_max_user_chars': 450,
                    'history_max_assistant_trace_chars': 1200,
                    'history_compress_head_ratio': 0.9},
           'small_caps': {'history_tool_result_max_chars': 100,
                          'history_max_user_chars': 30,
                          'history_max_assistant_trace_chars': 500,
                          'history_compress_head_ratio': 0.1},
           'opts': {'include_system_in_first_user': True,
                    'user_label': '用户',
                    'assistant_label': '助手',
                    'extract_tool_skill_tags': False,
                    'copy_lineage_fields': False,
                    'request_id_keys': ['id', 'request_id'],
                    'history_tool_result_max_chars': 0,
                    'text_key': 'flat',
                    'history_key': 'hist',
                    'query_key': 'q',
                    'response_key': 'r'},
           'noid': {'copy_request_id': False, 'messages_key': 'messages', 'choices_key': 'nochoices'}}
OUT_KEYS = {'default': ['text', 'dialog_history', 'query', 'response'],
            'caps': ['text', 'dialog_history', 'query', 'response'],
            'small_caps': ['text', 'dialog_history', 'query', 'response'],
            'opts': ['flat', 'hist', 'q', 'r'],
            'noid': ['text', 'dialog_history', 'query', 'response']}

# values from Data-Juicer 1.6.1: the dialog fields of every row (all but the long row 6 as literals,
# all rows as the md5 of their JSON) and the meta of every row
DEFAULT_ROWS = [{'text': '', 'dialog_history': [], 'query': '', 'response': ''},
                {'text': '', 'dialog_history': [], 'query': '', 'response': 'only a choice'},
                {'text': '', 'dialog_history': [], 'query': '', 'response': 'delta text'},
                {'text': 'User: Hi there\n\nAssistant: Hello!',
                 'dialog_history': [['Hi there', 'Hello!']],
                 'query': 'Hi there',
                 'response': 'Hello!'},
                {'text': 'User: Find /skills/web_search/SKILL.md\n'
                         'more text\n'
                         '\n'
                         'Assistant: [Tool calls: read_file, grep]\n'
                         '[Tool result]\n'
                         '## cron\n'
                         'file body\n'
                         '\n'
                         'let me think\n'
                         'deep\n'
                         'Done.\n'
                         '[Tool result]\n'
                         '\n'
                         '\n'
                         'User: nested dict\n'
                         '\n'
                         'Assistant: a\n'
                         'b\n'
                         '3',
                 'dialog_history': [['Find /skills/web_search/SKILL.md\nmore text',
                                     '[Tool calls: read_file, grep]\n'
                                     '[Tool result]\n'
                                     '## cron\n'
                                     'file body\n'
                                     '\n'
                                     'let me think\n'
                                     'deep\n'
                                     'Done.\n'
                                     '[Tool result]\n'],
                                    ['nested dict', 'a\nb\n3']],
                 'query': 'nested dict',
                 'response': 'a\nb\n3'},
                {'text': 'Assistant: [Tool calls: calc]\n'
                         '[Tool result]\n'
                         '42\n'
                         '\n'
                         "Check 'docs/my_skill/SKILL.md' please. ## Not.Skill\n"
                         '## 记忆',
                 'dialog_history': [['',
                                     '[Tool calls: calc]\n'
                                     '[Tool result]\n'
                                     '42\n'
                                     '\n'
                                     "Check 'docs/my_skill/SKILL.md' please. ## Not.Skill\n"
                                     '## 记忆']],
                 'query': '',
                 'response': '[Tool calls: calc]\n'
                             '[Tool result]\n'
                             '42\n'
                             '\n'
                             "Check 'docs/my_skill/SKILL.md' please. ## Not.Skill\n"
                             '## 记忆'},
                {'text': 'Assistant: no user yet\n\nUser: late user',
                 'dialog_history': [['', 'no user yet'], ['late user', '']],
                 'query': 'late user',
                 'response': 'fallback choice'}]
OPTS_ROWS = [{'flat': '', 'hist': [], 'q': '', 'r': ''},
             {'flat': '', 'hist': [], 'q': '', 'r': 'only a choice'},
             {'flat': '', 'hist': [], 'q': '', 'r': 'delta text'},
             {'flat': '用户: Hi there\n\n助手: Hello!',
              'hist': [['Hi there', 'Hello!']],
              'q': 'Hi there',
              'r': 'Hello!'},
             {'flat': '用户: You are helpful.\n'
                      '\n'
                      'Find /skills/web_search/SKILL.md\n'
                      'more text\n'
                      '\n'
                      '助手: [Tool calls: read_file, grep]\n'
                      '[Tool result]\n'
                      '## cron\n'
                      'file body\n'
                      '\n'
                      'let me think\n'
                      'deep\n'
                      'Done.\n'
                      '[Tool result]\n'
                      '\n'
                      '\n'
                      '用户: nested dict\n'
                      '\n'
                      '助手: a\n'
                      'b\n'
                      '3',
              'hist': [['You are helpful.\n\nFind /skills/web_search/SKILL.md\nmore text',
                        '[Tool calls: read_file, grep]\n'
                        '[Tool result]\n'
                        '## cron\n'
                        'file body\n'
                        '\n'
                        'let me think\n'
                        'deep\n'
                        'Done.\n'
                        '[Tool result]\n'],
                       ['nested dict', 'a\nb\n3']],
              'q': 'nested dict',
              'r': 'a\nb\n3'},
             {'flat': '助手: [Tool calls: calc]\n'
                      '[Tool result]\n'
                      '42\n'
                      '\n'
                      "Check 'docs/my_skill/SKILL.md' please. ## Not.Skill\n"
                      '## 记忆',
              'hist': [['',
                        '[Tool calls: calc]\n'
                        '[Tool result]\n'
                        '42\n'
                        '\n'
                        "Check 'docs/my_skill/SKILL.md' please. ## Not.Skill\n"
                        '## 记忆']],
              'q': '',
              'r': '[Tool calls: calc]\n'
                   '[Tool result]\n'
                   '42\n'
                   '\n'
                   "Check 'docs/my_skill/SKILL.md' please. ## Not.Skill\n"
                   '## 记忆'},
             {'flat': '助手: no user yet\n\n用户: late user',
              'hist': [['', 'no user yet'], ['late user', '']],
              'q': 'late user',
              'r': 'fallback choice'}]
DIGESTS = {'default': '3596c47f6a24ad9d8140ae4b71dadafb',
           'caps': 'c71b508e36a0bd108db54d8e417901f0',
           'small_caps': '6b06029e3e63de044e387a3d4afe7017',
           'opts': '0e66ae2b8bc694a6adc61d1ceeda2cc9',
           'noid': '694dcd0705ace8448f386b7be943acfa'}
METAS = {'default': [{'agent_dialog_history_compressed': False,
                      'agent_turn_count': 0,
                      'agent_tool_types': [''],
                      'agent_skill_types': ['']},
                     {'agent_dialog_history_compressed': False,
                      'agent_turn_count': 0,
                      'agent_tool_types': [''],
                      'agent_skill_types': ['']},
                     {'agent_dialog_history_compressed': False,
                      'agent_turn_count': 0,
                      'agent_tool_types': [''],
                      'agent_skill_types': ['']},
                     {'agent_dialog_history_compressed': False,
                      'agent_turn_count': 1,
                      'agent_tool_types': [''],
                      'agent_skill_types': [''],
                      'agent_last_user_msg_idx': 0,
                      'agent_last_assistant_msg_idx': 1,
                      'agent_request_id': 'r-1',
                      'agent_request_model': 'qwen-max',
                      'agent_pt': '20250101',
                      'agent_total_cost_time_ms': 1234},
                     {'agent_dialog_history_compressed': False,
                      'agent_turn_count': 2,
                      'agent_tool_types': ['read_file', 'grep'],
                      'agent_skill_types': ['web_search', 'cron'],
                      'agent_last_user_msg_idx': 7,
                      'agent_last_assistant_msg_idx': 8,
                      'agent_request_id': 't-2'},
                     {'prior': 'kept',
                      'agent_dialog_history_compressed': False,
                      'agent_turn_count': 1,
                      'agent_tool_types': ['calc'],
                      'agent_skill_types': ['my_skill', 'Not.Skill'],
                      'agent_last_assistant_msg_idx': 3},
                     {'agent_dialog_history_compressed': False,
                      'agent_turn_count': 2,
                      'agent_tool_types': ['t0',
                                           't1',
                                           't2',
                                           't3',
                                           't4',
                                           't5',
                                           't6',
                                           't7',
                                           't8',
                                           't9',
                                           't10',
                                           't11'],
                      'agent_skill_types': [''],
                      'agent_last_user_msg_idx': 4,
                      'agent_last_assistant_msg_idx': 3},
                     {'agent_dialog_history_compressed': False,
                      'agent_turn_count': 2,
                      'agent_tool_types': [''],
                      'agent_skill_types': [''],
                      'agent_last_user_msg_idx': 1,
                      'agent_last_assistant_msg_idx': 0}],
         'caps': [{'agent_dialog_history_compressed': False,
                   'agent_turn_count': 0,
                   'agent_tool_types': [''],
                   'agent_skill_types': ['']},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 0,
                   'agent_tool_types': [''],
                   'agent_skill_types': ['']},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 0,
                   'agent_tool_types': [''],
                   'agent_skill_types': ['']},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 1,
                   'agent_tool_types': [''],
                   'agent_skill_types': [''],
                   'agent_last_user_msg_idx': 0,
                   'agent_last_assistant_msg_idx': 1,
                   'agent_request_id': 'r-1',
                   'agent_request_model': 'qwen-max',
                   'agent_pt': '20250101',
                   'agent_total_cost_time_ms': 1234},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 2,
                   'agent_tool_types': ['read_file', 'grep'],
                   'agent_skill_types': ['web_search', 'cron'],
                   'agent_last_user_msg_idx': 7,
                   'agent_last_assistant_msg_idx': 8,
                   'agent_request_id': 't-2'},
                  {'prior': 'kept',
                   'agent_dialog_history_compressed': False,
                   'agent_turn_count': 1,
                   'agent_tool_types': ['calc'],
                   'agent_skill_types': ['my_skill', 'Not.Skill'],
                   'agent_last_assistant_msg_idx': 3},
                  {'agent_dialog_history_compressed': True,
                   'agent_turn_count': 2,
                   'agent_tool_types': ['t0',
                                        't1',
                                        't2',
                                        't3',
                                        't4',
                                        't5',
                                        't6',
                                        't7',
                                        't8',
                                        't9',
                                        't10',
                                        't11'],
                   'agent_skill_types': [''],
                   'agent_last_user_msg_idx': 4,
                   'agent_last_assistant_msg_idx': 3},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 2,
                   'agent_tool_types': [''],
                   'agent_skill_types': [''],
                   'agent_last_user_msg_idx': 1,
                   'agent_last_assistant_msg_idx': 0}],
         'small_caps': [{'agent_dialog_history_compressed': False,
                         'agent_turn_count': 0,
                         'agent_tool_types': [''],
                         'agent_skill_types': ['']},
                        {'agent_dialog_history_compressed': False,
                         'agent_turn_count': 0,
                         'agent_tool_types': [''],
                         'agent_skill_types': ['']},
                        {'agent_dialog_history_compressed': False,
                         'agent_turn_count': 0,
                         'agent_tool_types': [''],
                         'agent_skill_types': ['']},
                        {'agent_dialog_history_compressed': False,
                         'agent_turn_count': 1,
                         'agent_tool_types': [''],
                         'agent_skill_types': [''],
                         'agent_last_user_msg_idx': 0,
                         'agent_last_assistant_msg_idx': 1,
                         'agent_request_id': 'r-1',
                         'agent_request_model': 'qwen-max',
                         'agent_pt': '20250101',
                         'agent_total_cost_time_ms': 1234},
                        {'agent_dialog_history_compressed': True,
                         'agent_turn_count': 2,
                         'agent_tool_types': ['read_file', 'grep'],
                         'agent_skill_types': ['web_search', 'cron'],
                         'agent_last_user_msg_idx': 7,
                         'agent_last_assistant_msg_idx': 8,
                         'agent_request_id': 't-2'},
                        {'prior': 'kept',
                         'agent_dialog_history_compressed': False,
                         'agent_turn_count': 1,
                         'agent_tool_types': ['calc'],
                         'agent_skill_types': ['my_skill', 'Not.Skill'],
                         'agent_last_assistant_msg_idx': 3},
                        {'agent_dialog_history_compressed': True,
                         'agent_turn_count': 2,
                         'agent_tool_types': ['t0',
                                              't1',
                                              't2',
                                              't3',
                                              't4',
                                              't5',
                                              't6',
                                              't7',
                                              't8',
                                              't9',
                                              't10',
                                              't11'],
                         'agent_skill_types': [''],
                         'agent_last_user_msg_idx': 4,
                         'agent_last_assistant_msg_idx': 3},
                        {'agent_dialog_history_compressed': False,
                         'agent_turn_count': 2,
                         'agent_tool_types': [''],
                         'agent_skill_types': [''],
                         'agent_last_user_msg_idx': 1,
                         'agent_last_assistant_msg_idx': 0}],
         'opts': [{'agent_dialog_history_compressed': False, 'agent_turn_count': 0},
                  {'agent_dialog_history_compressed': False, 'agent_turn_count': 0},
                  {'agent_dialog_history_compressed': False, 'agent_turn_count': 0},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 1,
                   'agent_last_user_msg_idx': 0,
                   'agent_last_assistant_msg_idx': 1,
                   'agent_request_id': 'r-1'},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 2,
                   'agent_last_user_msg_idx': 7,
                   'agent_last_assistant_msg_idx': 8,
                   'agent_request_id': '5'},
                  {'prior': 'kept',
                   'agent_dialog_history_compressed': False,
                   'agent_turn_count': 1,
                   'agent_last_assistant_msg_idx': 3},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 2,
                   'agent_last_user_msg_idx': 4,
                   'agent_last_assistant_msg_idx': 3},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 2,
                   'agent_last_user_msg_idx': 1,
                   'agent_last_assistant_msg_idx': 0}],
         'noid': [{'agent_dialog_history_compressed': False,
                   'agent_turn_count': 0,
                   'agent_tool_types': [''],
                   'agent_skill_types': ['']},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 0,
                   'agent_tool_types': [''],
                   'agent_skill_types': ['']},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 0,
                   'agent_tool_types': [''],
                   'agent_skill_types': ['']},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 1,
                   'agent_tool_types': [''],
                   'agent_skill_types': [''],
                   'agent_last_user_msg_idx': 0,
                   'agent_last_assistant_msg_idx': 1,
                   'agent_request_model': 'qwen-max',
                   'agent_pt': '20250101',
                   'agent_total_cost_time_ms': 1234},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 2,
                   'agent_tool_types': ['read_file', 'grep'],
                   'agent_skill_types': ['web_search', 'cron'],
                   'agent_last_user_msg_idx': 7,
                   'agent_last_assistant_msg_idx': 8},
                  {'prior': 'kept',
                   'agent_dialog_history_compressed': False,
                   'agent_turn_count': 1,
                   'agent_tool_types': ['calc'],
                   'agent_skill_types': ['my_skill', 'Not.Skill'],
                   'agent_last_assistant_msg_idx': 3},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 2,
                   'agent_tool_types': ['t0',
                                        't1',
                                        't2',
                                        't3',
                                        't4',
                                        't5',
                                        't6',
                                        't7',
                                        't8',
                                        't9',
                                        't10',
                                        't11'],
                   'agent_skill_types': [''],
                   'agent_last_user_msg_idx': 4,
                   'agent_last_assistant_msg_idx': 3},
                  {'agent_dialog_history_compressed': False,
                   'agent_turn_count': 2,
                   'agent_tool_types': [''],
                   'agent_skill_types': [''],
                   'agent_last_user_msg_idx': 1,
                   'agent_last_assistant_msg_idx': 0}]}


def dialog_fields(name):
    out = run_ops_on_rows([make(**CONFIGS[name])], json.loads(json.dumps(DIALOG_ROWS)))
    return [{k: r[k] for k in OUT_KEYS[name]} for r in out], [r[Fields.meta] for r in out]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_matches_data_juicer(name):
    rows, metas = dialog_fields(name)
    assert metas == METAS[name]
    dump = json.dumps([[r[k] for k in OUT_KEYS[name]] for r in rows], ensure_ascii=False)
    assert hashlib.md5(dump.encode()).hexdigest() == DIGESTS[name]
    if name in ("default", "opts"):
        assert [r for i, r in enumerate(rows) if i != 6] == (DEFAULT_ROWS if name == "default" else OPTS_ROWS)


def test_head_tail_compression():
    text = "H" * 1000 + "M" * 1000 + "T" * 1000
    out = compress_head_tail(text, 1000, 0.62)
    # values from Data-Juicer 1.6.1
    head, marker, tail = out[:540], out[540:-332], out[-332:]
    assert head == "H" * 540 and tail == "T" * 332
    assert marker == "\n\n[··· 2128 chars omitted from middle; head+tail preserved — agent_dialog_normalize_mapper]\n\n"
    assert len(out) == 965
    assert compress_head_tail("short", 1000, 0.62) == "short"
    assert compress_head_tail("x" * 600, 500, 0.62) == "x" * 452 + "\n…[truncated — agent_dialog_normalize_mapper]…"


def test_dropped_tool_result_still_marks_compression():
    rows = [{"messages": [{"role": "tool", "content": "y" * 50}, {"role": "user", "content": "q"}]}]
    out = run_ops_on_rows([make(history_tool_result_max_chars=10)], rows)[0]
    assert out["dialog_history"] == [["q", ""]]
    assert out[Fields.meta]["agent_dialog_history_compressed"] is True


def test_non_dict_messages_are_skipped_but_keep_positions():
    rows = [{"messages": ["noise", {"role": "user", "content": "hi"}, 3, {"role": "assistant", "content": "yo"}]}]
    out = run_ops_on_rows([make()], rows)[0]
    assert out["text"] == "User: hi\n\nAssistant: yo"
    assert out[Fields.meta]["agent_last_user_msg_idx"] == 1
    assert out[Fields.meta]["agent_last_assistant_msg_idx"] == 3
