from agent_data import TOOL_TYPE_ROWS

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields


def make(**kw):
    return OPERATORS.get("agent_tool_type_mapper")(**kw)


def metas(op, rows):
    return [r.get(Fields.meta) for r in run_ops_on_rows([op], [dict(r) for r in rows])]


# values from Data-Juicer 1.6.1
EXPECTED_DEFAULT = [{'primary_tool_type': None, 'dominant_tool_types': []},
 {'primary_tool_type': None, 'dominant_tool_types': []},
 {'agent_tool_types': None, 'primary_tool_type': None, 'dominant_tool_types': []},
 {'agent_tool_types': 'search', 'primary_tool_type': None, 'dominant_tool_types': []},
 {'agent_tool_types': [], 'primary_tool_type': None, 'dominant_tool_types': []},
 {'agent_tool_types': ['search'], 'primary_tool_type': 'search', 'dominant_tool_types': ['search']},
 {'agent_tool_types': ['b', 'a', 'b', ' a ', 'c', '', '  ', None, 3, 'a'],
  'primary_tool_type': 'a',
  'dominant_tool_types': ['a', 'b', 'c', 'None', '3']},
 {'agent_tool_types': ['t1', 't2', 't3', 't4', 't5', 't6', 't7', 't2'],
  'primary_tool_type': 't2',
  'dominant_tool_types': ['t2', 't1', 't3', 't4', 't5']},
 {'agent_tool_types': ['x', 'y'], 'primary_tool_type': 'x', 'keep': True, 'dominant_tool_types': ['x', 'y']},
 {'tools': ['q', 'r', 'r'], 'primary_tool_type': None, 'dominant_tool_types': []}]
EXPECTED_CUSTOM = [{'p': None, 'd': []},
 {'p': None, 'd': []},
 {'agent_tool_types': None, 'p': None, 'd': []},
 {'agent_tool_types': 'search', 'p': None, 'd': []},
 {'agent_tool_types': [], 'p': None, 'd': []},
 {'agent_tool_types': ['search'], 'p': None, 'd': []},
 {'agent_tool_types': ['b', 'a', 'b', ' a ', 'c', '', '  ', None, 3, 'a'], 'p': None, 'd': []},
 {'agent_tool_types': ['t1', 't2', 't3', 't4', 't5', 't6', 't7', 't2'], 'p': None, 'd': []},
 {'agent_tool_types': ['x', 'y'], 'primary_tool_type': 'old', 'keep': True, 'p': None, 'd': []},
 {'tools': ['q', 'r', 'r'], 'p': 'r', 'd': ['r', 'q']}]
EXPECTED_K0 = [{'agent_tool_types': ['search'], 'primary_tool_type': None, 'dominant_tool_types': []},
 {'agent_tool_types': ['b', 'a', 'b', ' a ', 'c', '', '  ', None, 3, 'a'],
  'primary_tool_type': None,
  'dominant_tool_types': []},
 {'agent_tool_types': ['t1', 't2', 't3', 't4', 't5', 't6', 't7', 't2'],
  'primary_tool_type': None,
  'dominant_tool_types': []}]


def test_matches_data_juicer():
    assert metas(make(), TOOL_TYPE_ROWS) == EXPECTED_DEFAULT
    custom = make(tool_types_meta_key="tools", primary_key="p", dominant_key="d", top_k_dominant=2)
    assert metas(custom, TOOL_TYPE_ROWS) == EXPECTED_CUSTOM
    assert metas(make(top_k_dominant=0), TOOL_TYPE_ROWS[5:8]) == EXPECTED_K0
    assert metas(make(top_k_dominant=-1), TOOL_TYPE_ROWS[5:8]) == EXPECTED_K0


def test_ties_keep_first_seen_order_and_cjk():
    rows = [{"text": "x", Fields.meta: {"agent_tool_types": ["搜索", "浏览", "浏览", "搜索", "🔧"]}}]
    out = run_ops_on_rows([make(top_k_dominant=2)], rows)
    assert out[0]["text"] == "x"
    assert out[0][Fields.meta]["primary_tool_type"] == "搜索"
    assert out[0][Fields.meta]["dominant_tool_types"] == ["搜索", "浏览"]
