"""Tests of clean_email_mapper."""

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def _run(texts, **params):
    op = OPERATORS.get("clean_email_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


# values from Data-Juicer 1.6.1 (these inputs run through its op)
DJ_CASES = [
    ({}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('Contact john.doe+tag@example.com or JANE@Example.COM.', 'Contact  or JANE@Example.COM.'),
        ('a@b.c and x@y', ' and x@y'),
        ('中文邮箱 测试abc@example.com后缀', '中文邮箱 测试后缀'),
        ('user_name@sub-domain.example.co.uk!', '!'),
        ('multi\nline me@x.org\nnext@y.net', 'multi\nline \n'),
        ('😀me@mail.com😀', '😀😀'),
        ('@@@ a@@b.com', '@@@ a@@b.com'),
        ('first.last@EXAMPLE.com', 'first.last@EXAMPLE.com'),
    ]),
    ({'repl': '<EMAIL>'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('Contact john.doe+tag@example.com or JANE@Example.COM.', 'Contact <EMAIL> or JANE@Example.COM.'),
        ('a@b.c and x@y', '<EMAIL> and x@y'),
        ('中文邮箱 测试abc@example.com后缀', '中文邮箱 测试<EMAIL>后缀'),
        ('user_name@sub-domain.example.co.uk!', '<EMAIL>!'),
        ('multi\nline me@x.org\nnext@y.net', 'multi\nline <EMAIL>\n<EMAIL>'),
        ('😀me@mail.com😀', '😀<EMAIL>😀'),
        ('@@@ a@@b.com', '@@@ a@@b.com'),
        ('first.last@EXAMPLE.com', 'first.last@EXAMPLE.com'),
    ]),
    ({'pattern': "r'[a-z]+@'", 'repl': 'X'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('Contact john.doe+tag@example.com or JANE@Example.COM.',
         'Contact john.doe+Xexample.com or JANE@Example.COM.'),
        ('a@b.c and x@y', 'Xb.c and Xy'),
        ('中文邮箱 测试abc@example.com后缀', '中文邮箱 测试Xexample.com后缀'),
        ('user_name@sub-domain.example.co.uk!', 'user_Xsub-domain.example.co.uk!'),
        ('multi\nline me@x.org\nnext@y.net', 'multi\nline Xx.org\nXy.net'),
        ('😀me@mail.com😀', '😀Xmail.com😀'),
        ('@@@ a@@b.com', '@@@ X@b.com'),
        ('first.last@EXAMPLE.com', 'first.XEXAMPLE.com'),
    ]),
    ({'pattern': '@', 'repl': '\\g<0>\\g<0>'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('Contact john.doe+tag@example.com or JANE@Example.COM.',
         'Contact john.doe+tag@@example.com or JANE@@Example.COM.'),
        ('a@b.c and x@y', 'a@@b.c and x@@y'),
        ('中文邮箱 测试abc@example.com后缀', '中文邮箱 测试abc@@example.com后缀'),
        ('user_name@sub-domain.example.co.uk!', 'user_name@@sub-domain.example.co.uk!'),
        ('multi\nline me@x.org\nnext@y.net', 'multi\nline me@@x.org\nnext@@y.net'),
        ('😀me@mail.com😀', '😀me@@mail.com😀'),
        ('@@@ a@@b.com', '@@@@@@ a@@@@b.com'),
        ('first.last@EXAMPLE.com', 'first.last@@EXAMPLE.com'),
    ]),
]


@pytest.mark.parametrize("params,pairs", DJ_CASES)
def test_matches_data_juicer(params, pairs):
    assert _run([t for t, _ in pairs], **params) == [e for _, e in pairs]


def test_removes_emails_keeps_the_rest():
    assert _run(["mail a.b@c.org now", "", "无邮箱 😀", "x@y"]) == ["mail  now", "", "无邮箱 😀", "x@y"]


def test_very_long_line():
    long = "word " * 20000 + "me@example.com"
    assert _run([long], repl="<E>") == ["word " * 20000 + "<E>"]


def test_quoted_raw_pattern_and_group_reference():
    assert _run(["id: ab@cd.ef"], pattern="r'(\\w+)@'", repl="\\1 at ") == ["id: ab at cd.ef"]


def test_bad_pattern_is_a_clear_error():
    with pytest.raises(ValueError, match="clean_email_mapper.*pattern"):
        OPERATORS.get("clean_email_mapper")(pattern="[unclosed")
