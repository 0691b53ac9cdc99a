"""The kernels of ``repetition_kernels`` (character and word n-gram repetition ratios, word counts, table
counts) in a small C library (``c_build``; ctypes), with the same arguments and bit-identical results:
the same 64-bit n-gram hashes counted in the same open-addressing table, the same integer counts, the
ratio as one float64 division of the same two integers. ``repetition_numba``'s wrappers use these before
numba's, so the text filters map no LLVM (~130 MB, ~0.4 CPU-s a process). Not used (``available()`` is
False) without a C compiler, when a probe's results differ from the known ones, or with
``DJ_REPETITION_C=0`` / ``DJ_C_KERNELS=0``.
"""
from __future__ import annotations

import ctypes

import numpy as np

from data_juicer.ops.common import c_build

SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t MIX = 0x9E3779B97F4A7C15ull;

/* repetition_kernels._ngram_counts: the `total` n-grams of values[s:] (64-bit mixing) counted in an
   open-addressing table of size (at least 2 * total, a power of two) -> cnt (0: an empty slot), the
   number of distinct n-grams; values: the code points v32, else the hashes v64; returns the table size,
   0 when out of memory */
static int64_t ngram_counts(const uint32_t *v32, const uint64_t *v64, int64_t s, int64_t total, int64_t n,
                            uint64_t **keys_p, int64_t **cnt_p, int64_t *cap_p, int64_t *distinct) {
    int bits = 1;
    while (((int64_t)1 << bits) < 2 * total) bits++;
    int64_t size = (int64_t)1 << bits;
    if (size > *cap_p) {
        free(*keys_p); free(*cnt_p);
        *keys_p = malloc(sizeof(uint64_t) * size); *cnt_p = malloc(sizeof(int64_t) * size);
        *cap_p = size;
        if (!*keys_p || !*cnt_p) { *cap_p = 0; return 0; }
    }
    uint64_t *keys = *keys_p;
    int64_t *cnt = *cnt_p;
    memset(cnt, 0, sizeof(int64_t) * size);
    int shift = 64 - bits;
    int64_t mask = size - 1, k = 0;
    for (int64_t i = 0; i < total; i++) {
        uint64_t x;
        if (v32) {
            x = v32[s + i];
            for (int64_t j = 1; j < n; j++) { x = x * MIX; x ^= v32[s + i + j]; }
        } else {
            x = v64[s + i];
            for (int64_t j = 1; j < n; j++) { x = x * MIX; x ^= v64[s + i + j]; }
        }
        int64_t slot = (int64_t)((x * MIX) >> shift);
        for (;;) {
            int64_t c = cnt[slot];
            if (c == 0) { keys[slot] = x; cnt[slot] = 1; k++; break; }
            if (keys[slot] == x) { cnt[slot] = c + 1; break; }
            slot = (slot + 1) & mask;
        }
    }
    *distinct = k;
    return size;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* the number of table slots holding exactly one n-gram */
static int64_t singles(const int64_t *cnt, int64_t size) {
    int64_t c = 0;
    for (int64_t i = 0; i < size; i++) c += cnt[i] == 1;
    return c;
}

/* repetition_kernels.char_rep_ratios over uint32 code points */
int dj_char_rep_ratios(const uint32_t *codes, const int64_t *offsets, int64_t n_docs, int64_t n, double *out) {
    uint64_t *keys = NULL;
    int64_t *cnt = NULL, *rep = NULL, cap = 0, rcap = 0;
    int rc = -1;
    for (int64_t d = 0; d < n_docs; d++) {
        int64_t s = offsets[d], total = offsets[d + 1] - s - n + 1;
        if (total <= 0) { out[d] = 0.0; continue; }
        if (total > rcap) {
            free(rep);
            rcap = 2 * total;
            rep = malloc(sizeof(int64_t) * rcap);
            if (!rep) goto done;
        }
        int64_t k;
        int64_t size = ngram_counts(codes, NULL, s, total, n, &keys, &cnt, &cap, &k);
        if (!size) goto done;
        int64_t repeated = 0;
        for (int64_t i = 0; i < size; i++) if (cnt[i] > 1) rep[repeated++] = cnt[i];
        int64_t r = 0;  /* isqrt(k) */
        while ((r + 1) * (r + 1) <= k) r++;
        int64_t n_top = r < repeated ? r : repeated;
        if (n_top <= 0) { out[d] = 0.0; continue; }
        qsort(rep, (size_t)repeated, sizeof(int64_t), cmp_i64);
        int64_t acc = 0;
        for (int64_t i = repeated - n_top; i < repeated; i++) acc += rep[i];
        out[d] = (double)acc / (double)total;
    }
    rc = 0;
done:
    free(keys); free(cnt); free(rep);
    return rc;
}

/* repetition_kernels.word_rep_ratios over uint64 word hashes; -2 when a document has no n-gram */
int dj_word_rep_ratios(const uint64_t *hashes, const int64_t *offsets, int64_t n_docs, int64_t n, double *out) {
    uint64_t *keys = NULL;
    int64_t *cnt = NULL, cap = 0;
    int rc = -1;
    for (int64_t d = 0; d < n_docs; d++) {
        int64_t s = offsets[d], total = offsets[d + 1] - s - n + 1, k;
        if (total <= 0) { rc = -2; goto done; }
        int64_t size = ngram_counts(NULL, hashes, s, total, n, &keys, &cnt, &cap, &k);
        if (!size) goto done;
        out[d] = (double)(total - singles(cnt, size)) / (double)total;
    }
    rc = 0;
done:
    free(keys); free(cnt);
    return rc;
}

/* repetition_kernels._word_hash: FNV-1a over code points, then the splitmix64 finalizer */
static inline uint64_t word_hash(const uint32_t *codes, int64_t b, int64_t e) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (int64_t i = b; i < e; i++) { h ^= codes[i]; h *= 0x100000001B3ull; }
    h ^= (uint64_t)(e - b);
    h ^= h >> 30; h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27; h *= 0x94D049BB133111EBull;
    h ^= h >> 31;
    return h;
}

#define SPECIAL(c) ((c) < tlen ? special[c] : 0)

/* repetition_kernels.count_words: words split on space, newline, tab holding a character outside special */
void dj_count_words(const uint32_t *codes, const int64_t *offsets, int64_t n_docs, const uint8_t *special,
                    int64_t tlen, int64_t *out) {
    for (int64_t d = 0; d < n_docs; d++) {
        int64_t k = 0;
        int plain = 0;
        for (int64_t i = offsets[d]; i < offsets[d + 1]; i++) {
            uint32_t c = codes[i];
            if (c == 32 || c == 10 || c == 9) { if (plain) { k++; plain = 0; } }
            else if (SPECIAL(c) == 0) plain = 1;
        }
        out[d] = k + plain;
    }
}

/* repetition_kernels.text_word_rep_ratios */
int dj_text_word_rep_ratios(const uint32_t *codes, const int64_t *offsets, int64_t n_docs, const uint8_t *special,
                            int64_t tlen, int64_t n, double *out) {
    int64_t longest = 0;
    for (int64_t d = 0; d < n_docs; d++)
        if (offsets[d + 1] - offsets[d] > longest) longest = offsets[d + 1] - offsets[d];
    uint64_t *hashes = malloc(sizeof(uint64_t) * (longest / 2 + 1)), *keys = NULL;
    int64_t *cnt = NULL, cap = 0;
    int rc = -1;
    if (!hashes) goto done;
    for (int64_t d = 0; d < n_docs; d++) {
        int64_t m = 0, b = -1, last = -1, end = offsets[d + 1];
        for (int64_t i = offsets[d]; i <= end; i++) {
            uint32_t c = i == end ? 32 : codes[i];
            if (c == 32 || c == 10 || c == 9) {
                if (b >= 0) { hashes[m++] = word_hash(codes, b, last + 1); b = -1; }
            } else if (SPECIAL(c) == 0) {
                if (b < 0) b = i;
                last = i;
            }
        }
        int64_t total = m - n + 1, k;
        if (total <= 0) { out[d] = 0.0; continue; }
        int64_t size = ngram_counts(NULL, hashes, 0, total, n, &keys, &cnt, &cap, &k);
        if (!size) goto done;
        out[d] = (double)(total - singles(cnt, size)) / (double)total;
    }
    rc = 0;
done:
    free(hashes); free(keys); free(cnt);
    return rc;
}

/* repetition_kernels.table_counts over a uint8 table (a code point past its end counts 0) */
void dj_table_counts(const uint32_t *codes, const int64_t *offsets, int64_t n_docs, const uint8_t *table,
                     int64_t tlen, int64_t *out) {
    for (int64_t d = 0; d < n_docs; d++) {
        int64_t k = 0;
        for (int64_t i = offsets[d]; i < offsets[d + 1]; i++) { uint32_t c = codes[i]; k += c < tlen ? table[c] : 0; }
        out[d] = k;
    }
}
"""

_LIB = None  # the loaded library, False when unusable


def _setup(lib) -> None:
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    lib.dj_char_rep_ratios.argtypes = (p, p, i64, i64, p)
    lib.dj_char_rep_ratios.restype = ctypes.c_int
    lib.dj_word_rep_ratios.argtypes = (p, p, i64, i64, p)
    lib.dj_word_rep_ratios.restype = ctypes.c_int
    lib.dj_count_words.argtypes = (p, p, i64, p, i64, p)
    lib.dj_count_words.restype = None
    lib.dj_text_word_rep_ratios.argtypes = (p, p, i64, p, i64, i64, p)
    lib.dj_text_word_rep_ratios.restype = ctypes.c_int
    lib.dj_table_counts.argtypes = (p, p, i64, p, i64, p)
    lib.dj_table_counts.restype = None
    _probe(lib)


def _probe(lib) -> None:
    """Values worked out by hand; raises when the library's differ."""
    global _LIB
    _LIB = lib
    try:
        got = np.empty(3)
        char_rep_ratios(*_codes(["abcabcabc", "ab"]), 2, got)
        char_rep_ratios(*_codes(["abcdefghij" * 20]), 10, got[2:])
        # ab bc ca ab bc ca ab bc: 3 distinct, the isqrt(3) = 1 most frequent (3 times) of 8; one 2-gram;
        # 10 distinct 10-grams, the isqrt(10) = 3 most frequent 20 + 19 + 19 times of 191
        want = [3 / 8, 0.0, 58 / 191]
        codes, off = _codes(["the cat the, cat the! dog", "x y z x", "a  b\n\nc\td ..."])
        special = np.zeros(128, dtype=np.uint8)
        special[[ord(c) for c in ",.!"]] = 1
        ratios, counts, alpha = np.empty(3), np.empty(3, dtype=np.int64), np.empty(3, dtype=np.int64)
        text_word_rep_ratios(codes, off, special, 2, ratios)
        count_words(codes, off, special, counts)
        table_counts(codes, off, special, alpha)
        hashes = np.array([1, 2, 1, 2, 1, 3], dtype=np.uint64)
        words = np.empty(1)
        word_rep_ratios(hashes, np.array([0, 6], dtype=np.int64), 2, words)  # (1,2) (2,1) (1,2) (2,1) (1,3)
        got = got.tolist() + ratios.tolist() + counts.tolist() + alpha.tolist() + words.tolist()
        want += [4 / 5, 0.0, 0.0, 6, 4, 4, 2, 0, 3, 4 / 5]
        if got != want:
            raise ValueError(f"probe results {got} differ from {want}")
    finally:
        _LIB = None


def available() -> bool:
    """The library is built (or builds now), loads and gives the known values; asked once per process."""
    global _LIB
    if _LIB is None:
        _LIB = c_build.load(SOURCE, "repetition", "DJ_REPETITION_C", _setup) or False
    return bool(_LIB)


def _lib():
    if not available():
        raise RuntimeError("the repetition C library is unusable here (no C compiler, or switched off)")
    return _LIB


def _codes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    return codes, offsets


def _args(values: np.ndarray, dtype, offsets: np.ndarray, out: np.ndarray, out_dtype, n: int = 1):
    """Contiguous arrays of the kernel's types (``out`` must already be one: it is written in place)."""
    if n < 1:
        raise ValueError(f"n-gram length must be at least 1, not {n}")
    if out.dtype != out_dtype or not out.flags.c_contiguous or not out.flags.writeable:
        raise TypeError(f"out must be a writeable contiguous {np.dtype(out_dtype).name} array, not {out.dtype}")
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if len(out) < len(offsets) - 1:
        raise ValueError(f"out holds {len(out)} values for {len(offsets) - 1} documents")
    if len(offsets) > 1 and (offsets[0] < 0 or offsets[-1] > len(values) or np.any(np.diff(offsets) < 0)):
        raise ValueError("offsets must rise from 0 to at most the number of values")
    values = np.ascontiguousarray(values, dtype=dtype)
    if not len(values):
        values = np.zeros(1, dtype=dtype)  # a valid pointer for empty documents
    return values, offsets


def _table(table: np.ndarray) -> np.ndarray:
    table = np.ascontiguousarray(table)
    if table.dtype == np.bool_:
        return table.view(np.uint8)
    if table.dtype != np.uint8:
        raise TypeError(f"table must be uint8 or bool (0/1 over code points), not {table.dtype}")
    return table


def char_rep_ratios(codes, offsets, n, out) -> None:
    """``repetition_kernels.char_rep_ratios``: float64 ratio of each document's code points into ``out``."""
    codes, offsets = _args(codes, np.uint32, offsets, out, np.float64, n)
    if _lib().dj_char_rep_ratios(codes.ctypes.data, offsets.ctypes.data, len(offsets) - 1, int(n), out.ctypes.data):
        raise MemoryError("repetition C kernel: out of memory")


def word_rep_ratios(hashes, offsets, n, out) -> None:
    """``repetition_kernels.word_rep_ratios``: each document holds at least ``n`` word hashes."""
    hashes, offsets = _args(hashes, np.uint64, offsets, out, np.float64, n)
    rc = _lib().dj_word_rep_ratios(hashes.ctypes.data, offsets.ctypes.data, len(offsets) - 1, int(n), out.ctypes.data)
    if rc == -2:
        raise ValueError(f"word_rep_ratios: a document has fewer than n = {n} words (no n-gram)")
    if rc:
        raise MemoryError("repetition C kernel: out of memory")


def count_words(codes, offsets, special, out) -> None:
    """``repetition_kernels.count_words``: int64 word count of each document into ``out``."""
    codes, offsets = _args(codes, np.uint32, offsets, out, np.int64)
    special = _table(special)
    _lib().dj_count_words(codes.ctypes.data, offsets.ctypes.data, len(offsets) - 1, special.ctypes.data,
                        len(special), out.ctypes.data)


def text_word_rep_ratios(codes, offsets, special, n, out) -> None:
    """``repetition_kernels.text_word_rep_ratios``: float64 ratio of each document into ``out``."""
    codes, offsets = _args(codes, np.uint32, offsets, out, np.float64, n)
    special = _table(special)
    if _lib().dj_text_word_rep_ratios(codes.ctypes.data, offsets.ctypes.data, len(offsets) - 1, special.ctypes.data,
                                    len(special), int(n), out.ctypes.data):
        raise MemoryError("repetition C kernel: out of memory")


def table_counts(codes, offsets, table, out) -> None:
    """``repetition_kernels.table_counts``: int64 sum of ``table`` over each document's code points."""
    codes, offsets = _args(codes, np.uint32, offsets, out, np.int64)
    table = _table(table)
    _lib().dj_table_counts(codes.ctypes.data, offsets.ctypes.data, len(offsets) - 1, table.ctypes.data, len(table),
                         out.ctypes.data)
