from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def test_normalizes_exotic_whitespace_and_strips():
    op = OPERATORS.get("whitespace_normalization_mapper")()
    rows = [{"text": "  a\u00a0b\u3000c\td\u200be\nf  "}, {"text": ""}, {"text": "😀\u2009😀"}]
    assert [r["text"] for r in run_ops_on_rows([op], rows)] == ["a b c d e\nf", "", "😀 😀"]
