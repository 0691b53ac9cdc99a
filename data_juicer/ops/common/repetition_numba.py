"""Compiled character repetition ratios (numba) for a whole batch, equal to
``character_repetition_filter.char_rep_ratio_fast`` text by text; used when numba is installed."""

from __future__ import annotations

import numpy as np

from data_juicer.ops.common import minhash_numba


def available() -> bool:
    """numba is installed, usable, and the kernel compiles (or loads from numba's cache)."""
    return minhash_numba.kernel_usable("repetition ratio", lambda: char_rep_ratios(["abcabcabc"], 2), "numpy")


def char_rep_ratios(texts: list[str], n: int) -> np.ndarray:
    """float64 character ``n``-gram repetition ratio of each text, in one compiled call."""
    from data_juicer.ops.common import repetition_kernels as k

    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    out = np.empty(len(texts), dtype=np.float64)
    k.char_rep_ratios(codes, offsets, n, out)
    return out


def word_available() -> bool:
    """numba is installed, usable, and the word kernel compiles (or loads from numba's cache)."""
    return minhash_numba.kernel_usable("word repetition ratio", lambda: word_rep_ratios([["a"] * 80], 2), "numpy")


def word_rep_ratios(word_lists: list[list[str]], n: int) -> np.ndarray:
    """float64 word ``n``-gram repetition ratio of each word list (each of at least ``n + 63`` words,
    ``n >= 2``), from the words' ``hash``, in one compiled call."""
    from itertools import chain

    from data_juicer.ops.common import repetition_kernels as k

    offsets = np.zeros(len(word_lists) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in word_lists], out=offsets[1:])
    hashes = np.fromiter(map(hash, chain.from_iterable(word_lists)), dtype=np.int64,
                         count=int(offsets[-1])).view(np.uint64)
    out = np.empty(len(word_lists), dtype=np.float64)
    k.word_rep_ratios(hashes, offsets, n, out)
    return out
