"""Tests of replace_content_mapper."""

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def _run(texts, **params):
    op = OPERATORS.get("replace_content_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


# values from Data-Juicer 1.6.1 (these inputs run through its op)
DJ_CASES = [
    ({'pattern': '\\d+', 'repl': '<num>'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('phone 123-456 and 7890', 'phone <num>-<num> and <num>'),
        ('line1\nline2\nline3', 'line<num>\nline<num>\nline<num>'),
        ('John@Doe and Jane@Roe', 'John@Doe and Jane@Roe'),
        ('汉字ABC汉字', '汉字ABC汉字'),
        ('aaa', 'aaa'),
    ]),
    ({'pattern': ['(\\w+)@(\\w+)', '\\d'], 'repl': ['\\2 at \\1', '#']}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('phone 123-456 and 7890', 'phone ###-### and ####'),
        ('line1\nline2\nline3', 'line#\nline#\nline#'),
        ('John@Doe and Jane@Roe', 'Doe at John and Roe at Jane'),
        ('汉字ABC汉字', '汉字ABC汉字'),
        ('aaa', 'aaa'),
    ]),
    ({'pattern': ['a', 'b'], 'repl': 'Z'}, [
        ('', ''),
        ('plain ascii text.', 'plZin Zscii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('phone 123-456 and 7890', 'phone 123-456 Znd 7890'),
        ('line1\nline2\nline3', 'line1\nline2\nline3'),
        ('John@Doe and Jane@Roe', 'John@Doe Znd JZne@Roe'),
        ('汉字ABC汉字', '汉字ABC汉字'),
        ('aaa', 'ZZZ'),
    ]),
    ({'pattern': 'line1.+line3', 'repl': 'L'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('phone 123-456 and 7890', 'phone 123-456 and 7890'),
        ('line1\nline2\nline3', 'L'),
        ('John@Doe and Jane@Roe', 'John@Doe and Jane@Roe'),
        ('汉字ABC汉字', '汉字ABC汉字'),
        ('aaa', 'aaa'),
    ]),
    ({'pattern': "r'\\p{Han}+'", 'repl': '<zh>'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '<zh>，<zh>。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('phone 123-456 and 7890', 'phone 123-456 and 7890'),
        ('line1\nline2\nline3', 'line1\nline2\nline3'),
        ('John@Doe and Jane@Roe', 'John@Doe and Jane@Roe'),
        ('汉字ABC汉字', '<zh>ABC<zh>'),
        ('aaa', 'aaa'),
    ]),
    ({'pattern': None}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('phone 123-456 and 7890', 'phone 123-456 and 7890'),
        ('line1\nline2\nline3', 'line1\nline2\nline3'),
        ('John@Doe and Jane@Roe', 'John@Doe and Jane@Roe'),
        ('汉字ABC汉字', '汉字ABC汉字'),
        ('aaa', 'aaa'),
    ]),
    ({'pattern': 'a', 'repl': ['1', '2']}, [
        ('', ''),
        ('plain ascii text.', 'pl1in 1scii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('phone 123-456 and 7890', 'phone 123-456 1nd 7890'),
        ('line1\nline2\nline3', 'line1\nline2\nline3'),
        ('John@Doe and Jane@Roe', 'John@Doe 1nd J1ne@Roe'),
        ('汉字ABC汉字', '汉字ABC汉字'),
        ('aaa', '111'),
    ]),
]


@pytest.mark.parametrize("params,pairs", DJ_CASES)
def test_matches_data_juicer(params, pairs):
    assert _run([t for t, _ in pairs], **params) == [e for _, e in pairs]


def test_patterns_apply_in_order():
    assert _run(["a1 b22 中文3 😀"], pattern=["\\d+", "<n>"], repl=["<n>", "#"]) == ["a# b# 中文# 😀"]
    assert _run([""], pattern="^", repl="x") == ["x"]


def test_too_few_replacements_fail_when_built():
    with pytest.raises(ValueError, match="2 patterns but only 1"):
        OPERATORS.get("replace_content_mapper")(pattern=["a", "b"], repl=["x"])


def test_bad_pattern_is_a_clear_error():
    with pytest.raises(ValueError, match="replace_content_mapper"):
        OPERATORS.get("replace_content_mapper")(pattern=["ok", "(bad"])


def test_very_long_line():
    assert _run(["ab" * 50000], pattern="b", repl="") == ["a" * 50000]
