"""The C SimHash kernel (``simhash_c``) gives numba's kernel's values (``simhash_numba``, the spec) and the
Python path's (hashlib MD5 + simhash-pybind's ``compute``) bit for bit; ``simhash_numba`` uses it first
and falls back to numba without it."""
import hashlib
import random

import pytest

from data_juicer.ops import OPERATORS
from data_juicer.ops.common import minhash_numba, simhash_c, simhash_numba

pytestmark = pytest.mark.skipif(not simhash_c.available(), reason="no C compiler here")

WORDS = ["the", "a", "Über", "naïve", "中文", "字", "😀", "x" * 300, "", "  ", "end.", "Ünïcödé", "q",
         "y" * 55, "z" * 56, "w" * 64, "v" * 119]  # MD5 messages about the one / two padding block edges
_RNG = random.Random(5)
TEXTS = ["", "one", "two words", "a  b   c    d e f g h", "   ", " lead and trail "] + [
    " ".join(_RNG.choice(WORDS) for _ in range(_RNG.randint(0, 80))) for _ in range(300)]


def test_literals():
    got = simhash_c.space_simhashes(["a b c", "the quick brown fox jumps over the lazy dog", "x  y z"], 2).tolist()
    assert got == [345032579217117222, 2986305419909545984, 9228304446117793804]
    assert simhash_c.space_simhashes(["one two", "", "   "], 6).tolist() == [0, 0, 0]  # no window of 6 words
    # one word, window 1: its MD5's first 8 bytes; "" hashed nowhere (no word)
    assert simhash_c.space_simhashes(["abc"], 1).tolist() == [int.from_bytes(hashlib.md5(b"abc").digest()[:8], "big")]
    assert simhash_c.space_simhashes(["abc"], 1).tolist() == [0x900150983CD24FB0]
    with pytest.raises(ValueError, match="at least 1"):
        simhash_c.space_simhashes(["a"], 0)


@pytest.mark.parametrize("window", [1, 2, 3, 6, 40])
def test_equals_numba_and_the_python_path(window):
    got = simhash_c.space_simhashes(TEXTS, window).tolist()
    if minhash_numba.numba_usable():
        assert got == simhash_numba.numba_space_simhashes(TEXTS, window).tolist()
    op = OPERATORS.get("document_simhash_deduplicator")(tokenization="space", window_size=window, lowercase=False)
    compute = pytest.importorskip("simhash").compute
    assert got == [op._simhash(t, compute) for t in TEXTS]


def test_switched_off_falls_back_to_numba(monkeypatch):
    want = simhash_numba.space_simhashes(TEXTS[:50], 3).tolist()
    monkeypatch.setenv("DJ_SIMHASH_C", "0")
    monkeypatch.setattr(simhash_c, "_LIB", None)
    assert simhash_c.available() is False
    if minhash_numba.numba_usable():
        assert simhash_numba.available() and simhash_numba.space_simhashes(TEXTS[:50], 3).tolist() == want
