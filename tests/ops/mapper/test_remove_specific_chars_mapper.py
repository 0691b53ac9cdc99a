"""Tests of remove_specific_chars_mapper."""

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def _run(texts, **params):
    op = OPERATORS.get("remove_specific_chars_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


# values from Data-Juicer 1.6.1 (these inputs run through its op)
DJ_CASES = [
    ({}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('◆●■►▼▲▴∆▻▷❖♡□ text ◆', ' text '),
        ('a-b^c]d\\e[f', 'a-b^c]d\\e[f'),
        ('abc-def', 'abc-def'),
        ('x◆y●z', 'xyz'),
        ('😀a😀b', '😀a😀b'),
    ]),
    ({'chars_to_remove': '-^]\\'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('◆●■►▼▲▴∆▻▷❖♡□ text ◆', '◆●■►▼▲▴∆▻▷❖♡□ text ◆'),
        ('a-b^c]d\\e[f', 'abcde[f'),
        ('abc-def', 'abcdef'),
        ('x◆y●z', 'x◆y●z'),
        ('😀a😀b', '😀a😀b'),
    ]),
    ({'chars_to_remove': ['ab', 'c-e', '😀']}, [
        ('', ''),
        ('plain ascii text.', 'plin sii txt.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'moji 👍🏽 txt'),
        ('◆●■►▼▲▴∆▻▷❖♡□ text ◆', '◆●■►▼▲▴∆▻▷❖♡□ txt ◆'),
        ('a-b^c]d\\e[f', '^]d\\[f'),
        ('abc-def', 'df'),
        ('x◆y●z', 'x◆y●z'),
        ('😀a😀b', ''),
    ]),
    ({'chars_to_remove': ''}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('◆●■►▼▲▴∆▻▷❖♡□ text ◆', '◆●■►▼▲▴∆▻▷❖♡□ text ◆'),
        ('a-b^c]d\\e[f', 'a-b^c]d\\e[f'),
        ('abc-def', 'abc-def'),
        ('x◆y●z', 'x◆y●z'),
        ('😀a😀b', '😀a😀b'),
    ]),
    (
        {'chars_to_remove':
            ' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~◆😀中'},
        [
        ('', ''),
        ('plain ascii text.', ''),
        ('中文测试，没有特殊内容。', '文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', '👍🏽'),
        ('◆●■►▼▲▴∆▻▷❖♡□ text ◆', '●■►▼▲▴∆▻▷❖♡□'),
        ('a-b^c]d\\e[f', ''),
        ('abc-def', ''),
        ('x◆y●z', '●'),
        ('😀a😀b', ''),
    ]),
    ({'chars_to_remove': []}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('◆●■►▼▲▴∆▻▷❖♡□ text ◆', '◆●■►▼▲▴∆▻▷❖♡□ text ◆'),
        ('a-b^c]d\\e[f', 'a-b^c]d\\e[f'),
        ('abc-def', 'abc-def'),
        ('x◆y●z', 'x◆y●z'),
        ('😀a😀b', '😀a😀b'),
    ]),
]


@pytest.mark.parametrize("params,pairs", DJ_CASES)
def test_matches_data_juicer(params, pairs):
    assert _run([t for t, _ in pairs], **params) == [e for _, e in pairs]


def test_default_set_and_edge_cases():
    texts = ["◆ 标题 ●", "", "□😀♡", "nothing to remove"]
    assert _run(texts) == [" 标题 ", "", "😀", "nothing to remove"]


def test_many_characters_and_long_text():
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + 200)]  # more chars than the replace loop handles
    text = "".join(chars) + "keep" + "一" * 100000
    assert _run([text], chars_to_remove=chars) == ["keep"]


def test_bad_chars_is_a_clear_error():
    with pytest.raises(ValueError, match="chars_to_remove"):
        OPERATORS.get("remove_specific_chars_mapper")(chars_to_remove=["a", 1])
