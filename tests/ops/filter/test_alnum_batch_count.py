"""count_alnum_batch (one code-point array per batch) gives count_alnum's integers."""

import random

from data_juicer.ops.filter.alphanumeric_filter import count_alnum, count_alnum_batch


def test_batch_counts_literal():
    assert count_alnum_batch(["ab1 !", "", "é中😀𝐀x", "___"]) == [3, 0, 4, 0]  # 𝐀 (U+1D400) is alphabetic
    assert count_alnum_batch([]) == []


def test_batch_counts_equal_per_text_counts():
    pieces = list("aZ09 é.,!_\n\t中ßİ٣😀\U0001d400\U00020000\ud800\u00a0") + ["Hello", "x1y2"]
    rng = random.Random(7)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(2000)]
    assert count_alnum_batch(texts) == [count_alnum(t) for t in texts]
