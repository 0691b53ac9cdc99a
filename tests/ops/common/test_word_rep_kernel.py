"""The compiled word n-gram repetition ratio (repetition_numba.word_rep_ratios) equals the numpy
path of word_repetition_filter (word_rep_ratio_fast) and the exact Counter one."""

import random

import pytest

from data_juicer.ops.common import repetition_numba
from data_juicer.ops.filter.word_repetition_filter import word_rep_ratio, word_rep_ratio_fast, word_rep_ratios

pytestmark = pytest.mark.skipif(not repetition_numba.word_available(), reason="numba kernel unusable here")


def test_compiled_ratios_equal_numpy_and_exact_ones():
    rng = random.Random(3)
    vocab = ["w%d" % i for i in range(40)]
    lists = [[rng.choice(vocab[:rng.randint(2, 40)]) for _ in range(rng.randint(64, 400))] for _ in range(300)]
    for n in (2, 3, 10):
        got = repetition_numba.word_rep_ratios(lists, n).tolist()
        assert got == [word_rep_ratio_fast(w, n, spaces_possible=False) for w in lists]
        assert got == [word_rep_ratio(w, n) for w in lists]


def test_batch_ratios_mix_short_and_long_lists():
    words = ["a", "b", "c", "d"] * 20 + ["x"]  # 72 10-grams: all but the last (holding "x") repeat
    assert word_rep_ratios([words, ["a", "b"], []], 10) == [71 / 72, 0.0, 0.0]
    assert word_rep_ratios([["a b", "c"] * 40], 2, spaces_possible=True) == [1.0]


def test_lower_refined_words_equal_per_word_lower_then_strip():
    from data_juicer.ops.common.text_words import lower_refined_words, refine_words, split_words

    assert lower_refined_words("Hello, WORLD! 42 ÉCOLE") == ["hello", "world", "école"]
    assert lower_refined_words("ΑΣπ x") is None  # Σ: lower case depends on its neighbours
    pieces = list("aZé ÉßİσπºªıÅ.,!?'\"()-\n\t\u00a0\u3000中😀") + ["Hello", "WORLD", "İstanbul", "ﬁ", "ΑΣ"]
    rng = random.Random(17)
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 15)))
        got = lower_refined_words(text)
        assert got is None or got == refine_words(split_words(text), lower_case=True), repr(text)
