import pickle

import pytest

from data_juicer.core.runner import OpError, run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

KEY = "general_field_filter_condition"


def make(cond, **kw):
    return OPERATORS.get("general_field_filter")(filter_condition=cond, **kw)


def rows():
    return [
        {"text": "a", "num": 5, "meta": {"lang": "en", "score": 0.5, "tags": ["x", "y"], "n": "12"},
         Fields.suffix: ".jsonl"},
        {"text": "b", "num": 0, "meta": {"lang": "zh", "score": 0.0, "tags": ["x"], "n": "abc"}, Fields.suffix: ".txt"},
        {"text": "c", "num": None, "meta": {"lang": None, "score": None, "tags": [], "n": None}, Fields.suffix: ".md"},
        {"text": "d", "num": -3, "meta": {"lang": "en", "score": 2.5, "tags": ["z"], "n": "3.5"},
         Fields.suffix: ".jsonl"},
        {"text": "", "num": 30, "meta": {"lang": "fr", "score": -1.0, "tags": ["y", "x"], "n": " 7 "},
         Fields.suffix: "txt"},
        {"text": "中文😀", "num": 10, "meta": {"lang": "EN", "score": 1e9, "tags": ["x", "q"], "n": "0"},
         Fields.suffix: ".jsonl"},
    ]


# values from Data-Juicer 1.6.1: kept texts (the stat of each kept sample is True)
@pytest.mark.parametrize("cond,texts", [
    ("10 <= num <= 30 and text != 'b'", ["", "中文😀"]),
    ("meta.lang == 'en' or num in [0, 30]", ["a", "b", "d", ""]),
    ("meta.lang in ('en', 'zh')", ["a", "b", "d"]),
    ("meta.lang not in ['en']", ["b", "c", "", "中文😀"]),
    ("not num", ["b", "c"]),
    ("num > -4 and meta.score >= 0", ["a", "b", "d", "中文😀"]),
    ("__dj__suffix__ == '.jsonl'", ["a", "d", "中文😀"]),
    ("meta.missing == 1", []),
    ("missing_col != 1", []),
    ("'x' in meta.tags", ["a", "b", "", "中文😀"]),
    ("num == None", []),
    ("1 < 2 < num", ["a", "", "中文😀"]),
    ("meta.n.x == 1", []),
    ("num >= -3 and not (meta.lang == 'en')", ["b", "", "中文😀"]),
    ("meta.score > -1.5 or num < 0", ["a", "b", "d", "", "中文😀"]),
    ("meta.lang in {'fr', 'EN'}", ["", "中文😀"]),
    ("num != 5 and num != 0", ["d", "", "中文😀"]),
])
def test_matches_data_juicer(cond, texts):
    out = run_ops_on_rows([make(cond)], rows())
    assert [r["text"] for r in out] == texts
    assert all(r[Fields.stats] == {KEY: True} for r in out)


def test_bare_field_stores_its_value_and_keeps_truthy():
    # values from Data-Juicer 1.6.1
    out = run_ops_on_rows([make("text")], rows())
    assert [r["text"] for r in out] == ["a", "b", "c", "d", "中文😀"]
    assert [r[Fields.stats][KEY] for r in out] == ["a", "b", "c", "d", "中文😀"]


def test_empty_condition_keeps_all_without_stat():
    out = run_ops_on_rows([make("  ")], rows())
    assert len(out) == 6 and all(r[Fields.stats] == {} for r in out)


def test_stats_fields_and_reuse():
    data = [{"text": "x", Fields.stats: {"text_len": 3}}, {"text": "y", Fields.stats: {"text_len": 30, KEY: True}}]
    out = run_ops_on_rows([make("__dj__stats__.text_len > 10")], data)
    assert [r["text"] for r in out] == ["y"]


def test_attributes_of_non_records_are_not_exposed():
    # Data-Juicer would read `num.real` with getattr; here only nested records can be looked into
    assert run_ops_on_rows([make("num.real > 1")], rows()) == []
    assert run_ops_on_rows([make("text.__class__ != None")], rows()) == []


@pytest.mark.parametrize("cond,what", [
    ("__import__('os').system('true')", "Call"),
    ("num + 1 > 3", "BinOp"),
    ("meta['lang'] == 'en'", "Subscript"),
    ("(lambda: 1)() == 1", "Call"),
    ("num is None", "Is"),
    ("{'a': 1} == num", "Dict"),
    ("[x for x in text] == []", "ListComp"),
    ("~num == 1", "Invert"),
    ("f'{num}' == '5'", "JoinedStr"),
])
def test_refuses_anything_but_the_condition_grammar(cond, what):
    with pytest.raises(ValueError, match=f"uses {what}.*not allowed"):
        make(cond)


def test_syntax_error_is_clear():
    with pytest.raises(ValueError, match="invalid filter_condition"):
        make("num >")


def test_type_errors_are_per_sample_errors():
    with pytest.raises(OpError, match="TypeError"):
        run_ops_on_rows([make("text > 3", skip_op_error=False)], [{"text": "a"}])


def test_pickles_for_worker_processes():
    op = make("num > 3")
    run_ops_on_rows([op], [{"text": "a", "num": 5}])
    clone = pickle.loads(pickle.dumps(op))
    assert [r["text"] for r in run_ops_on_rows([clone], rows())] == ["a", "", "中文😀"]
