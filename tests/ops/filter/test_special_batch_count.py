"""count_special_batch (one code-point array per batch) gives count_special's integers."""

import random

from data_juicer.ops.filter.special_characters_filter import count_special, count_special_batch


def test_batch_counts_literal():
    assert count_special_batch(["ab1 !", "", "é中😀x", "abc"]) == [3, 0, 1, 0]  # '1', ' ', '!'; the emoji
    assert count_special_batch([]) == []


def test_batch_counts_equal_per_text_counts():
    pieces = list("aZ09 é.,!_\n\t中ß«»—•©😀🚀\U0001d400\ud800\u00a0\u3000") + ["Hello", "x1y2"]
    rng = random.Random(9)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(2000)]
    assert count_special_batch(texts) == [count_special(t) for t in texts]
