"""count_words_batch (words_num_filter without a context) gives the length of the stripped word list."""

import random

from data_juicer.ops.common.text_words import refine_words, split_words
from data_juicer.ops.filter.words_num_filter import count_words_batch


def test_batch_counts_literal():
    texts = ["Hello, world!  42 ... ok", "", "   ", "a\tb\nc", "«x» — 😀y😀", "...", "tail "]
    assert count_words_batch(texts) == [3, 0, 0, 3, 2, 0, 1]
    assert count_words_batch([]) == []


def test_batch_counts_equal_stripped_word_counts():
    pieces = list("aZé 09.,!?'\"()-\n\t\r\u00a0\u3000中😀«»—–•\ud800\x1c") + ["Hello", "WORLD", "ΑΣπ", "ﬁ", "  "]
    rng = random.Random(13)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 25))) for _ in range(3000)]
    assert count_words_batch(texts) == [len(refine_words(split_words(t))) for t in texts]
