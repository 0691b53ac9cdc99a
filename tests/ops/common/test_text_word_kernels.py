"""The compiled counts and ratios read straight from the text (repetition_numba.count_words,
text_word_rep_ratios) equal the Python word lists' (split_words + refine_words)."""

import random

import pytest

from data_juicer.ops.common import repetition_numba
from data_juicer.ops.common.text_words import lower_commutes, refine_words, split_words
from data_juicer.ops.filter.word_repetition_filter import word_rep_ratio

pytestmark = pytest.mark.skipif(not repetition_numba.text_available(), reason="numba kernel unusable here")

PIECES = ["a", "b", "the", "Cat", "cat!", "...", "42", "😀", " ", "  ", "\n", "\t", "\r", "\x0b", "\u3000", "中文",
          "(x)", "é", "—", "-", "dog,", "\xa0", "ß", "İ", "Σ", "ΣΑΣ", "Ø", "ø", "\ud800", ""]


def _texts(seed, k):
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 60))) for _ in range(k)]


def test_count_words_literals():
    assert repetition_numba.count_words(["a  b\n\nc\td", "a\u3000b\xa0c", "...hi!! (there) 42 😀 ---", "", " \n\t",
                                         "x\ry"]) == [4, 1, 2, 0, 0, 1]


def test_count_words_equals_python_split_and_strip():
    texts = _texts(1, 1500)
    assert repetition_numba.count_words(texts) == [len(refine_words(split_words(t))) for t in texts]


def test_word_rep_literals():
    # "the cat the cat the dog": 2-grams (the cat) x2, (cat the) x2, (the dog) -> 4/5
    assert repetition_numba.text_word_rep_ratios(["the cat the, cat the! dog", "a", "😀 😀", ""], 2) == [0.8, 0.0, 0.0, 0.0]
    assert repetition_numba.text_word_rep_ratios(["x y x y x"], 1) == [1.0]
    assert repetition_numba.text_word_rep_ratios(["x y z x"], 1) == [0.5]


@pytest.mark.parametrize("n", [1, 2, 3, 10])
def test_word_rep_equals_python_word_lists(n):
    texts = [t.lower() for t in _texts(n, 800)]
    texts += [" ".join(random.Random(n + j).choice(["a", "b", "c!", "(d)"]) for _ in range(300)) for j in range(20)]
    got = repetition_numba.text_word_rep_ratios(texts, n)
    assert got == [word_rep_ratio(refine_words(split_words(t)), n) for t in texts]


def test_lowered_text_gives_lowered_words_where_lower_commutes():
    texts = [t for t in _texts(9, 1500) if lower_commutes(t)]
    assert len(texts) > 200
    got = repetition_numba.text_word_rep_ratios([t.lower() for t in texts], 2)
    assert got == [word_rep_ratio(refine_words(split_words(t), lower_case=True), 2) for t in texts]


@pytest.mark.parametrize("counts_kernel", [True, False])
def test_alnum_and_special_batch_counts_equal_per_text_counts(counts_kernel, monkeypatch):
    from data_juicer.ops.filter import alphanumeric_filter as af
    from data_juicer.ops.filter import special_characters_filter as sf

    if not counts_kernel:  # the numpy fallback
        monkeypatch.setattr(repetition_numba, "counts_available", lambda: False)
    texts = _texts(21, 600) + ["", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐍈 😀😀 ١٢٣", "abc123 _-!"]
    assert af.count_alnum_batch(texts) == [af.count_alnum(t) for t in texts]
    assert sf.count_special_batch(texts) == [sf.count_special(t) for t in texts]
    assert af.count_alnum_batch(["abc123 _-!", "𝔘𝔫 😀"]) == [6, 2]
    assert sf.count_special_batch(["abc123 _-!", "𝔘𝔫 😀"]) == [7, 2]


def test_lower_commutes_literals():
    assert lower_commutes("plain ascii") and lower_commutes("обычный текст") and lower_commutes("")
    assert not lower_commutes("ΣΑΣ") and not lower_commutes("x Ø y") and not lower_commutes("Гора")
