"""Tests of punctuation_normalization_mapper."""

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def _run(texts, **params):
    op = OPERATORS.get("punctuation_normalization_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


# values from Data-Juicer 1.6.1 (these inputs run through its op)
DJ_CASES = [
    ({}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试,没有特殊内容.'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('你好，世界。这是「测试」：１２３？！', '你好,世界.这是"测试":"２３?!'),
        ('«quote» — dash – en … ～ ％ ► 【x】〈y〉', '"quote"  -  dash - en ... ~ % - [x]<y>'),
        ('´acute ’ ∶ ； （）', "'acute ' : ; ()"),
        ('．end', '. end'),
        ('━━━', '---'),
        ('😀，😀', '😀,😀'),
    ]),
]


@pytest.mark.parametrize("params,pairs", DJ_CASES)
def test_matches_data_juicer(params, pairs):
    assert _run([t for t, _ in pairs], **params) == [e for _, e in pairs]


def test_maps_unicode_punctuation_to_ascii():
    texts = ["你好，世界！（测试）", "", "ascii stays, as is.", "😀…😀"]
    assert _run(texts) == ["你好,世界!(测试)", "", "ascii stays, as is.", "😀...😀"]


def test_very_long_line():
    assert _run(["句子。" * 50000]) == ["句子." * 50000]
