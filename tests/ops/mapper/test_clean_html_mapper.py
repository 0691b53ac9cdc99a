"""Tests of clean_html_mapper."""

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def _run(texts, **params):
    op = OPERATORS.get("clean_html_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


# values from Data-Juicer 1.6.1 (these inputs run through its op)
DJ_CASES = [
    ({}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('<html><body><p>Hello</p><ul><li>one</li><li>two</li></ul></body></html>', 'Hello\n*one\n*two'),
        ('<ol><li>a</li><li>b</li></ol>', '*\n*a\n*b'),
        ('<script>var x=1;</script>text', 'var x=1;text'),
        ('&amp; &lt;b&gt; &nbsp;x', '& <b> \xa0x'),
        ('<p>中文 😀</p>', '中文 😀'),
        ('  leading spaces  ', 'leading spaces  '),
        ('a\r\nb\rc', 'a\nb\nc'),
        ('<LI>upper</LI>', 'upper'),
        ("<li class='x'>attr</li>", 'attr'),
        ('<!-- comment -->x', 'x'),
        ('<br>line<br/>two', 'linetwo'),
        ('<title>T</title><style>p{}</style><div>body</div>', 'Tp{}body'),
        ('\n\n\ttext\n\n', 'text\n\n'),
        ('5 < 6 and 7 > 3', '5 < 6 and 7 > 3'),
        ('<ul>\n  <li>x</li>\n</ul>', '\n  \n*x\n'),
        ('tab\there', 'tab\there'),
        ('nul\x00char', 'nulchar'),
        ('<p>a</p>\n<p>b</p>', 'a\nb'),
        ('<table><tr><td>1</td><td>2</td></tr></table>', '12'),
        ('&#x1F600; &copy; &unknown;', '😀 © &unknown;'),
        ('<<li>/li>', '<\n*/li>'),
        ('\x0b\x0cff', '\x0b\x0cff'),
    ]),
]


@pytest.mark.parametrize("params,pairs", DJ_CASES)
def test_matches_data_juicer(params, pairs):
    assert _run([t for t, _ in pairs], **params) == [e for _, e in pairs]


def test_lists_become_bullet_lines():
    html = "<h1>Title</h1><ul><li>first</li><li>second</li></ul><p>end &amp; done</p>"
    assert _run([html]) == ["Title\n*first\n*secondend & done"]


def test_plain_text_only_loses_leading_whitespace():
    # without tags, entities, CR or NUL the parser leaves the text as it is, after leading blanks
    texts = ["", "   ", "\n\t plain 中文 😀 text \n", "x\x0by\u00a0z\u3000", "a" * 100000]
    assert _run(texts) == ["", "", "plain 中文 😀 text \n", "x\x0by\u00a0z\u3000", "a" * 100000]


def test_lone_surrogate_is_dropped_like_the_parser_does():
    assert _run(["a\ud800b"]) == ["ab"]


def test_non_string_values_pass_through():
    op = OPERATORS.get("clean_html_mapper")()
    assert op.process_batched({"text": [None, "<b>x</b>"]})["text"] == [None, "x"]
    assert op.requires == ("selectolax",)
