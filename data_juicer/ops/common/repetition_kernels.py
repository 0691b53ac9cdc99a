"""numba kernels of the character and word n-gram repetition ratios (``character_repetition_filter``,
``word_repetition_filter``).

Imported only through ``repetition_numba`` when numba is installed. Module-level functions, so
numba's on-disk cache (``cache=True``) holds across processes.
"""

import numba as nb
import numpy as np

_MIX = np.uint64(0x9E3779B97F4A7C15)


@nb.njit(cache=True)
def _ngram_counts(values, s, total, n):  # pragma: no cover - compiled
    """The ``total`` n-grams of ``values[s:]`` hashed as the ``*_fast`` Python paths hash them (64-bit
    mixing), counted in an open-addressing table (no sort): (count per slot, 0 for an empty slot;
    number of distinct n-grams)."""
    bits = 1
    while (1 << bits) < 2 * total:
        bits += 1
    size = 1 << bits
    shift = np.uint64(64 - bits)
    mask = np.int64(size - 1)
    keys = np.empty(size, np.uint64)
    cnt = np.zeros(size, np.int64)
    k = 0
    for i in range(total):
        x = np.uint64(values[s + i])
        for j in range(1, n):
            x = x * _MIX
            x ^= np.uint64(values[s + i + j])
        slot = np.int64((x * _MIX) >> shift)
        while True:
            c = cnt[slot]
            if c == 0:
                keys[slot] = x
                cnt[slot] = 1
                k += 1
                break
            if keys[slot] == x:
                cnt[slot] = c + 1
                break
            slot = (slot + np.int64(1)) & mask
    return cnt, k


@nb.njit(cache=True)
def char_rep_ratios(codes, offsets, n, out):  # pragma: no cover - compiled
    """For each document ``d`` (code points ``codes[offsets[d]:offsets[d+1]]``) the share of its
    ``n``-grams taken by its ``isqrt(#distinct)`` most frequent repeated ones. The n-grams are the
    64-bit hashes of ``character_repetition_filter.char_rep_ratio_fast``, so the results equal its."""
    for d in range(len(offsets) - 1):
        s = offsets[d]
        total = offsets[d + 1] - s - n + 1
        if total <= 0:
            out[d] = 0.0
            continue
        cnt, k = _ngram_counts(codes, s, total, n)
        rep = cnt[cnt > 1]
        repeated = len(rep)
        r = int(np.sqrt(k))
        while r * r > k:
            r -= 1
        while (r + 1) * (r + 1) <= k:
            r += 1
        n_top = min(r, repeated)
        if n_top <= 0:
            out[d] = 0.0
            continue
        rep.sort()  # the n_top largest counts are among the repeated ones (n_top <= repeated)
        acc = 0
        for i in range(repeated - n_top, repeated):
            acc += rep[i]
        out[d] = acc / total


@nb.njit(cache=True)
def word_rep_ratios(hashes, offsets, n, out):  # pragma: no cover - compiled
    """For each document ``d`` (word hashes ``hashes[offsets[d]:offsets[d+1]]``, at least ``n + 63``
    of them) the share of its word ``n``-grams that occur more than once. The n-gram hashes are
    those of ``word_repetition_filter.word_rep_ratio_fast`` (same mixing), counted exactly in an
    open-addressing table instead of after a sort, so the ratios equal its."""
    for d in range(len(offsets) - 1):
        s = offsets[d]
        total = offsets[d + 1] - s - n + 1
        cnt, _ = _ngram_counts(hashes, s, total, n)
        singles = np.count_nonzero(cnt == 1)
        out[d] = (total - singles) / total


@nb.njit(cache=True)
def _word_hash(codes, b, e):  # pragma: no cover - compiled
    """64-bit hash of the code points ``codes[b:e]`` (FNV-1a over code points, then the splitmix64
    finalizer): equal words hash equal; different words collide with probability about 2**-64."""
    h = np.uint64(0xCBF29CE484222325)
    for i in range(b, e):
        h ^= np.uint64(codes[i])
        h *= np.uint64(0x100000001B3)
    h ^= np.uint64(e - b)
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


@nb.njit(cache=True)
def count_words(codes, offsets, special, out):  # pragma: no cover - compiled
    """For each document ``d`` (code points ``codes[offsets[d]:offsets[d+1]]``) the number of its
    words split on space, newline and tab that hold a character outside ``special`` (a uint8 table
    over code points): ``len(refine_words(split_words(text)))``."""
    for d in range(len(offsets) - 1):
        k = 0
        plain = False
        for i in range(offsets[d], offsets[d + 1]):
            c = codes[i]
            if c == 32 or c == 10 or c == 9:
                if plain:
                    k += 1
                    plain = False
            elif special[c] == 0:
                plain = True
        if plain:
            k += 1
        out[d] = k


@nb.njit(cache=True)
def text_word_rep_ratios(codes, offsets, special, n, out):  # pragma: no cover - compiled
    """For each document ``d`` (code points of its lower-cased text) the word ``n``-gram repetition
    ratio of ``refine_words(split_words(text))``: words split on space, newline and tab, stripped
    of ``special`` characters at both ends, emptied words dropped, each word hashed by its code
    points (``_word_hash``), n-grams hashed and counted as ``word_rep_ratios`` does."""
    longest = 0
    for d in range(len(offsets) - 1):
        longest = max(longest, offsets[d + 1] - offsets[d])
    hashes = np.empty(longest // 2 + 1, np.uint64)  # a word takes a character and a separator
    for d in range(len(offsets) - 1):
        m = 0
        b = -1  # first non-special character of the current word, -1 before it
        last = -1  # last non-special character of the current word
        for i in range(offsets[d], offsets[d + 1] + 1):
            c = 32 if i == offsets[d + 1] else codes[i]
            if c == 32 or c == 10 or c == 9:
                if b >= 0:
                    hashes[m] = _word_hash(codes, b, last + 1)
                    m += 1
                    b = -1
            elif special[c] == 0:
                if b < 0:
                    b = i
                last = i
        total = m - n + 1
        if total <= 0:
            out[d] = 0.0
            continue
        cnt, _ = _ngram_counts(hashes, 0, total, n)
        singles = np.count_nonzero(cnt == 1)
        out[d] = (total - singles) / total


@nb.njit(cache=True)
def table_counts(codes, offsets, table, out):  # pragma: no cover - compiled
    """For each document ``d`` the sum of ``table[c]`` over its code points ``c`` (``codes[offsets[d]:
    offsets[d+1]]``): with a 0/1 table, how many of its characters are in the set the table marks."""
    for d in range(len(offsets) - 1):
        k = 0
        for i in range(offsets[d], offsets[d + 1]):
            k += table[codes[i]]
        out[d] = k
