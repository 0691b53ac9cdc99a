"""Tests of clean_links_mapper."""

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def _run(texts, **params):
    op = OPERATORS.get("clean_links_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


# values from Data-Juicer 1.6.1 (these inputs run through its op)
DJ_CASES = [
    ({}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('see https://www.example.com/path?q=1&x=2 now', 'see  now'),
        ('ftp://files.example.org/a.txt.', '.'),
        ('www.google.com', ''),
        ('Visit example.com/page.', 'Visit .'),
        ('(http://en.wikipedia.org/wiki/Foo_(bar))', '()'),
        ('mailto:someone@x.com', ''),
        ('链接：https://例子.中国/路径 结束', '链接： 结束'),
        ('http://a.b/c。', ''),
        ('CAPS HTTP://EXAMPLE.COM/X', 'CAPS '),
        ('time 10:30 ok', 'time 10:30 ok'),
        ('note:this is text', ' is text'),
        ('a.b.c/d e', 'a.b.c/d e'),
        ('https://x.y/«q»', '»'),
        ('www2.site.org, and more', ', and more'),
        ('C:\\path\\file', 'C:\\path\\file'),
        ("http://x.com/'quoted'", "'"),
        ('file:///tmp/x.txt', ''),
        ('élève http://ex.fr/café', 'élève '),
        ('x http://a.com/́b y', 'x  y'),
        ('data:image/png;base64,AAAA', ''),
    ]),
    ({'repl': '<URL>'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('see https://www.example.com/path?q=1&x=2 now', 'see <URL> now'),
        ('ftp://files.example.org/a.txt.', '<URL>.'),
        ('www.google.com', '<URL>'),
        ('Visit example.com/page.', 'Visit <URL>.'),
        ('(http://en.wikipedia.org/wiki/Foo_(bar))', '(<URL>)'),
        ('mailto:someone@x.com', '<URL>'),
        ('链接：https://例子.中国/路径 结束', '链接：<URL> 结束'),
        ('http://a.b/c。', '<URL>'),
        ('CAPS HTTP://EXAMPLE.COM/X', 'CAPS <URL>'),
        ('time 10:30 ok', 'time 10:30 ok'),
        ('note:this is text', '<URL> is text'),
        ('a.b.c/d e', 'a.b.c/d e'),
        ('https://x.y/«q»', '<URL>»'),
        ('www2.site.org, and more', '<URL>, and more'),
        ('C:\\path\\file', 'C:\\path\\file'),
        ("http://x.com/'quoted'", "<URL>'"),
        ('file:///tmp/x.txt', '<URL>'),
        ('élève http://ex.fr/café', 'élève <URL>'),
        ('x http://a.com/́b y', 'x <URL> y'),
        ('data:image/png;base64,AAAA', '<URL>'),
    ]),
    ({'pattern': 'https?://\\S+', 'repl': 'L'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('see https://www.example.com/path?q=1&x=2 now', 'see L now'),
        ('ftp://files.example.org/a.txt.', 'ftp://files.example.org/a.txt.'),
        ('www.google.com', 'www.google.com'),
        ('Visit example.com/page.', 'Visit example.com/page.'),
        ('(http://en.wikipedia.org/wiki/Foo_(bar))', '(L'),
        ('mailto:someone@x.com', 'mailto:someone@x.com'),
        ('链接：https://例子.中国/路径 结束', '链接：L 结束'),
        ('http://a.b/c。', 'L'),
        ('CAPS HTTP://EXAMPLE.COM/X', 'CAPS HTTP://EXAMPLE.COM/X'),
        ('time 10:30 ok', 'time 10:30 ok'),
        ('note:this is text', 'note:this is text'),
        ('a.b.c/d e', 'a.b.c/d e'),
        ('https://x.y/«q»', 'L'),
        ('www2.site.org, and more', 'www2.site.org, and more'),
        ('C:\\path\\file', 'C:\\path\\file'),
        ("http://x.com/'quoted'", 'L'),
        ('file:///tmp/x.txt', 'file:///tmp/x.txt'),
        ('élève http://ex.fr/café', 'élève L'),
        ('x http://a.com/́b y', 'x L y'),
        ('data:image/png;base64,AAAA', 'data:image/png;base64,AAAA'),
    ]),
]


@pytest.mark.parametrize("params,pairs", DJ_CASES)
def test_matches_data_juicer(params, pairs):
    assert _run([t for t, _ in pairs], **params) == [e for _, e in pairs]


def test_removes_links_in_mixed_text():
    texts = ["去 https://example.com/a?b=1 看看😀", "", "no links here."]
    assert _run(texts) == ["去  看看😀", "", "no links here."]


def test_very_long_line():
    long = "text " * 20000
    assert _run([long + "http://x.org/p " + long]) == [long + " " + long]


def test_bad_pattern_is_a_clear_error():
    with pytest.raises(ValueError, match="clean_links_mapper"):
        OPERATORS.get("clean_links_mapper")(pattern="a)")
