"""Compiled kernels of the text filters for a whole batch: character and word n-gram repetition ratios,
word counts, table counts (equal to the filters' Python paths text by text). The kernels are the C
library's (``repetition_c``) where a C compiler built it, so no LLVM is mapped, else numba's
(``repetition_kernels``), with the same results; each ``*available()`` says whether one of them works.
"""

from __future__ import annotations

import numpy as np

from data_juicer.ops.common import minhash_numba, repetition_c


def _kernels():
    """``repetition_c`` where its library loads, else numba's ``repetition_kernels`` (same arguments)."""
    if repetition_c.available():
        return repetition_c
    from data_juicer.ops.common import repetition_kernels

    return repetition_kernels


def _usable(name: str, probe, fallback: str) -> bool:
    return repetition_c.available() or minhash_numba.kernel_usable(name, probe, fallback)


def available() -> bool:
    """The C library loads, or numba is usable and its kernel compiles (or loads from numba's cache)."""
    return _usable("repetition ratio", lambda: char_rep_ratios(["abcabcabc"], 2), "numpy")


def char_rep_ratios(texts: list[str], n: int) -> np.ndarray:
    """float64 character ``n``-gram repetition ratio of each text, in one compiled call."""
    k = _kernels()

    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    out = np.empty(len(texts), dtype=np.float64)
    k.char_rep_ratios(codes, offsets, n, out)
    return out


def word_available() -> bool:
    """The C library loads, or numba is usable and the word kernel compiles (or loads from its cache)."""
    return _usable("word repetition ratio", lambda: word_rep_ratios([["a"] * 80], 2), "numpy")


def word_rep_ratios(word_lists: list[list[str]], n: int) -> np.ndarray:
    """float64 word ``n``-gram repetition ratio of each word list (each of at least ``n + 63`` words,
    ``n >= 2``), from the words' ``hash``, in one compiled call."""
    from itertools import chain

    k = _kernels()
    offsets = np.zeros(len(word_lists) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in word_lists], out=offsets[1:])
    hashes = np.fromiter(map(hash, chain.from_iterable(word_lists)), dtype=np.int64,
                         count=int(offsets[-1])).view(np.uint64)
    out = np.empty(len(word_lists), dtype=np.float64)
    k.word_rep_ratios(hashes, offsets, n, out)
    return out


def _codes(texts: list[str]):
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    return codes, offsets


def text_available() -> bool:
    """The C library loads, or numba is usable and the kernels reading words straight from the text
    compile (or load)."""
    return _usable(
        "text word kernels", lambda: (count_words(["a b"]), text_word_rep_ratios(["a b a b"], 2)), "Python")


def count_words(texts: list[str]) -> list[int]:
    """``len(refine_words(split_words(t)))`` of each text (words holding a non-special character), in one compiled call."""
    from data_juicer.ops.common.strip_characters import special_table

    k = _kernels()
    codes, offsets = _codes(texts)
    out = np.empty(len(texts), dtype=np.int64)
    k.count_words(codes, offsets, special_table(), out)
    return out.tolist()


def text_word_rep_ratios(texts: list[str], n: int) -> list[float]:
    """Word ``n``-gram repetition ratio of ``refine_words(split_words(t))`` of each text (lower-case
    the texts first for the lower-cased words), in one compiled call without building the words.
    The words are compared by a 64-bit hash of their code points, their n-grams as in
    ``word_rep_ratios``: the counts, and so the ratios, are the exact ones unless two different
    words or n-grams share a 64-bit hash."""
    from data_juicer.ops.common.strip_characters import special_table

    k = _kernels()
    codes, offsets = _codes(texts)
    out = np.empty(len(texts), dtype=np.float64)
    k.text_word_rep_ratios(codes, offsets, special_table(), n, out)
    return out.tolist()


def counts_available() -> bool:
    """The C library loads, or numba is usable and the table count kernel compiles (or loads)."""
    return _usable(
        "character table counts", lambda: table_counts(["ab"], np.ones(0x110000, dtype=np.uint8)), "numpy")


def table_counts(texts: list[str], table: np.ndarray, codes=None) -> list[int]:
    """For each text, how many of its characters ``table`` (uint8 0/1 over all code points) marks,
    in one compiled call (``codes``: the batch's code points, when the caller already has them)."""
    k = _kernels()

    if codes is None:
        codes, offsets = _codes(texts)
    else:
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(t) for t in texts], out=offsets[1:])
    out = np.empty(len(texts), dtype=np.int64)
    k.table_counts(codes, offsets, table, out)
    return out.tolist()
