import time

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

TEXTS = [
    "", "no newline here",
    "Results\nName Score Rank\nAlice 90 1\nBob 85 2\nEnd of table",
    "Header line\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter the table",
    "x\na\tb\nc\td\n", "title\na b\n\nc d\n\n\ne f g\nh i j\n",
    "first line\nsecond line\nthird line here\nfourth line here\n",
    "中文\n甲 乙 丙\n丁 戊 己\n😀 😀 😀\n",
    "p\na  b\nc d\ne\u3000f\ng h\n",
    "t\na|b|c\nd e f\n",
    "q\na b c\nd|e f\n1 2\n3 4\ng h i\n",
]


def _run(texts, **params):
    op = OPERATORS.get("remove_table_text_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


def test_removes_table_rows_after_a_line_break():
    assert _run(["Results\nName Score\nAlice 90\nBob 85\nEnd of table"]) == ["Results\nEnd of table"]
    # the first line never counts as a row, and a row must end with a line break
    assert _run(["a b\nc d\ne f"]) == ["a b\nc d\ne f"]


def test_param_range_is_checked():
    with pytest.raises(ValueError, match="min_col"):
        OPERATORS.get("remove_table_text_mapper")(min_col=1)
    assert _run(["x\na b\nc d\n"], min_col=5, max_col=3) == ["x\na b\nc d\n"]  # empty range: no-op


def test_many_pipes_on_last_line_is_fast():
    text = "x\n" + "|".join(["c"] * 300) + "\n" + "|".join(["c"] * 300)
    start = time.perf_counter()
    assert _run([text]) == [text]
    assert time.perf_counter() - start < 1


def test_matches_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run(TEXTS) == [
        '',
        'no newline here',
        'Results\nEnd of table',
        'Header line\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter the table',
        'x\n',
        'title\n',
        'first line\nsecond line\n',
        '中文\n',
        'p\na  b\nc d\ne\u3000f\ng h\n',
        't\n',
        'q\n',
    ]
    assert _run(TEXTS, min_col=3, max_col=3) == [
        '',
        'no newline here',
        'Results\nEnd of table',
        'Header line\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter the table',
        'x\na\tb\nc\td\n',
        'title\na b\n\nc d\n\n\n',
        'first line\nsecond line\n',
        '中文\n',
        'p\na  b\nc d\ne\u3000f\ng h\n',
        't\n',
        'q\n1 2\n3 4\ng h i\n',
    ]
    assert _run(TEXTS, min_col=2, max_col=2) == [
        '',
        'no newline here',
        'Results\nName Score Rank\nAlice 90 1\nBob 85 2\nEnd of table',
        'Header line\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter the table',
        'x\n',
        'title\ne f g\nh i j\n',
        'first line\nsecond line\nthird line here\nfourth line here\n',
        '中文\n甲 乙 丙\n丁 戊 己\n😀 😀 😀\n',
        'p\na  b\nc d\ne\u3000f\ng h\n',
        't\na|b|c\nd e f\n',
        'q\na b c\ng h i\n',
    ]
