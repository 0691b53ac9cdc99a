"""Tests of the shared word helpers of the text filters (data_juicer/ops/common/text_words.py)."""

import random

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.ops.common.strip_characters import SPECIAL_CHARACTERS
from data_juicer.ops.common.text_words import LOWER_UNSAFE_CHARS, lower_stripped, refine_words, split_words


def test_lower_unsafe_chars_are_every_char_whose_lower_case_crosses_the_special_set():
    found = {c for c in map(chr, range(0x110000))
             if (c in SPECIAL_CHARACTERS and c.lower() != c)
             or (c not in SPECIAL_CHARACTERS and any(x in SPECIAL_CHARACTERS for x in c.lower()))}
    assert found | {"\u03a3"} == set(LOWER_UNSAFE_CHARS)


def test_lower_stripped_equals_lower_then_strip():
    assert lower_stripped("Hello, World!", ["Hello", "World"]) == ["hello", "world"]
    assert lower_stripped("ΑΣπ x", ["ΑΣ", "x"]) is None  # Σ's lower case depends on the stripped π
    assert lower_stripped("", []) == []
    pieces = list("aZé ÉßİΣσπºªıÅ.,!?'\"()-\n\t\u00a0\u3000中😀Ø") + ["Hello", "WORLD", "ΑΣ", "İstanbul", "ﬁ"]
    rng = random.Random(5)
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 15)))
        expected = refine_words(split_words(text), lower_case=True)
        got = lower_stripped(text, refine_words(split_words(text)))
        assert got is None or got == expected, repr(text)


def test_word_filters_share_stripped_words_with_the_same_stats():
    texts = ["The cat sat. The cat sat on the MAT!!", "ΑΣπ word ÉCOLE école, école", "a b", ""]
    wn = OPERATORS.get("words_num_filter")(min_num=0)
    wr = OPERATORS.get("word_repetition_filter")(rep_len=2, max_ratio=1.0)
    both = run_ops_on_rows([wn, wr], [{"text": t} for t in texts])
    alone = run_ops_on_rows([OPERATORS.get("word_repetition_filter")(rep_len=2, max_ratio=1.0)],
                            [{"text": t} for t in texts])
    assert [r["__dj__stats__"]["word_rep_ratio"] for r in both] == \
        [r["__dj__stats__"]["word_rep_ratio"] for r in alone]
    assert [r["__dj__stats__"]["num_words"] for r in both] == [9, 5, 2, 0]
    assert both[0]["__dj__stats__"]["word_rep_ratio"] == 0.5


def test_refine_words_with_the_text_strips_the_same_words():
    # with the text given, str.strip of the special characters it holds; the same words as the
    # character-by-character strip of the full set
    text = "«Hello», — x1 ...  42 naïve! 😀ok😀 (a)"
    assert refine_words(split_words(text), text=text) == ["Hello", "x", "naïve", "ok", "a"]
    assert refine_words(split_words("plain words, only ASCII!"), text="plain words, only ASCII!") == \
        ["plain", "words", "only", "ASCII"]
    assert refine_words([], text="") == []
    assert refine_words(["...", "!!"], text="... !!") == []
    pieces = list("aZé .,!?'\"()-\n\t\u00a0\u3000中😀«»—–•©®°±½0123456789") + ["Hello", "WORLD", "ΑΣπ", "ﬁ", "\ud800"]
    rng = random.Random(11)
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 20)))
        words = split_words(text)
        assert refine_words(words, text=text) == refine_words(words), repr(text)
