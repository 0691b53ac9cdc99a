"""All pairs of 64-bit SimHashes within a Hamming distance, in numpy (bounded memory, no Python ints).

The same set of pairs as simhash-pybind's ``find_all(values, num_blocks, hamming_distance)``: the 64 bits
are cut into ``num_blocks`` blocks; two values at most ``hamming_distance`` bits apart agree on at least
``num_blocks - hamming_distance`` whole blocks (pigeonhole), so for each choice of that many blocks the
values are sorted on those blocks' bits and each run of equal keys is compared pair by pair. The set
found is "every pair of the distinct values within the distance", whatever the block layout.

Memory: when the chosen blocks' bits and the bits of a value's index fit in 64 (6 blocks, distance 4:
22 + 21 bits at 2M values), each choice sorts one packed array in place (the chosen bits on top, the
index below): 8 B a value, reused for every choice, plus the candidates; otherwise an argsort per choice
(key, order: ~24 B a value). Against ~170 B for ``find_all`` (a Python int per value, the C++ tables and
the Python set of tuples it returns).
"""

from __future__ import annotations

from itertools import combinations, pairwise

import numpy as np

_SLICE = 1 << 16  # values packed or scanned at a time


def _block_masks(num_blocks: int) -> list[np.uint64]:
    """Bit masks of ``num_blocks`` contiguous blocks covering the 64 bits (widths differ by at most 1)."""
    edges = [round(64 * i / num_blocks) for i in range(num_blocks + 1)]
    return [np.uint64(((1 << (hi - lo)) - 1) << lo) for lo, hi in pairwise(edges)]


def near_pairs(values: np.ndarray, num_blocks: int, hamming_distance: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)``, ``i < j``, of the ``values`` (uint64, distinct) that differ in at most
    ``hamming_distance`` bits; each pair once, sorted by ``(i, j)``.

    A pair is recorded only under the first choice of blocks (in ``combinations`` order) on which it
    agrees, i.e. its ``num_blocks - hamming_distance`` lowest agreeing blocks: each pair once, no
    de-duplication of pairs found again under later choices."""
    values = np.asarray(values, dtype=np.uint64)
    n = len(values)
    if not hamming_distance < num_blocks <= 64:
        raise ValueError(f"num_blocks ({num_blocks}) must be greater than hamming_distance ({hamming_distance}) "
                         "and at most 64")
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    edges = [round(64 * i / num_blocks) for i in range(num_blocks + 1)]
    bits = max(1, (n - 1).bit_length())
    masks = _block_masks(num_blocks)
    found, buf = [], None
    for chosen in combinations(range(num_blocks), num_blocks - hamming_distance):
        # blocks before the last chosen one that are not chosen: a pair agreeing on any of them was
        # recorded under an earlier choice
        earlier = [masks[b] for b in range(chosen[-1]) if b not in chosen]
        width = sum(edges[b + 1] - edges[b] for b in chosen)
        if width + bits <= 64:
            if buf is None:
                buf = np.empty(n, dtype=np.uint64)
            _packed_pairs(values, buf, [(edges[b], edges[b + 1] - edges[b]) for b in chosen], bits,
                          hamming_distance, earlier, found)
        else:
            mask = np.uint64(0)
            for b in chosen:
                mask |= masks[b]
            _sorted_pairs(values, mask, hamming_distance, earlier, found)
    del buf
    if not found:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    code = np.unique(np.concatenate(found))
    return code // n, code % n


def _run_pairs(key_at, index_at, values: np.ndarray, cand: np.ndarray, hamming_distance: int, earlier: list,
               found: list) -> None:
    """Append the pairs (as ``min * n + max``) within the runs of equal keys to ``found``: ``cand`` are
    sorted positions whose next entry has the same key; ``key_at`` / ``index_at`` read the key / value
    index at sorted positions; pairs that agree on a block of ``earlier`` are left out."""
    n = len(values)
    d = 1
    while len(cand):
        a, b = index_at(cand), index_at(cand + d)
        x = values[a] ^ values[b]
        ok = np.bitwise_count(x) <= hamming_distance
        for m in earlier:
            ok &= (x & m) != 0
        if ok.any():
            a, b = a[ok], b[ok]
            found.append(np.minimum(a, b) * n + np.maximum(a, b))
        del a, b, x, ok
        d += 1
        cand = cand[cand + d < n]
        cand = cand[key_at(cand + d) == key_at(cand)]  # runs are contiguous: still inside the run


def _packed_pairs(values: np.ndarray, buf: np.ndarray, blocks: list[tuple[int, int]], bits: int,
                  hamming_distance: int, earlier: list, found: list) -> None:
    """One choice of blocks, ``(shift, width)`` each: the blocks' bits and the value's index packed in one
    uint64 (``buf``), sorted in place, runs of equal blocks compared a slice of positions at a time."""
    n = len(values)
    low = np.uint64((1 << bits) - 1)
    for lo in range(0, n, _SLICE):
        v = values[lo:lo + _SLICE]
        k = np.zeros(len(v), dtype=np.uint64)
        for shift, width in blocks:
            k <<= np.uint64(width)
            k |= (v >> np.uint64(shift)) & np.uint64((1 << width) - 1)
        k <<= np.uint64(bits)
        k |= np.arange(lo, lo + len(v), dtype=np.uint64)
        buf[lo:lo + len(v)] = k
    buf.sort()
    sh = np.uint64(bits)
    for lo in range(0, n - 1, _SLICE):
        hi = min(lo + _SLICE, n - 1)
        cand = np.flatnonzero((buf[lo + 1:hi + 1] >> sh) == (buf[lo:hi] >> sh)) + lo
        _run_pairs(lambda p: buf[p] >> sh, lambda p: (buf[p] & low).astype(np.int64), values, cand,
                   hamming_distance, earlier, found)


def _sorted_pairs(values: np.ndarray, mask: np.uint64, hamming_distance: int, earlier: list, found: list) -> None:
    """One choice of blocks (``mask``) when the packed key does not fit: an argsort of the masked values."""
    key = values & mask
    order = np.argsort(key, kind="stable")
    key = key[order]
    n = len(values)
    for lo in range(0, n - 1, _SLICE):
        hi = min(lo + _SLICE, n - 1)
        cand = np.flatnonzero(key[lo + 1:hi + 1] == key[lo:hi]) + lo
        _run_pairs(lambda p: key[p], lambda p: order[p], values, cand, hamming_distance, earlier, found)


def first_of_each_value(values: np.ndarray) -> np.ndarray:
    """The first row of each distinct value (uint64), ascending, i.e. the distinct values in order of first
    appearance are ``values[result]``; int32 below 2**31 rows. The values are grouped as two 32-bit words
    each by ``hash_groups.first_rows`` (packed keys sorted in place, checked exactly): ~9 B a row."""
    from data_juicer.ops.common.hash_groups import first_rows

    values = np.ascontiguousarray(values, dtype=np.uint64)
    return first_rows([values.view(np.uint32).reshape(len(values), 2)] if len(values) else [])[0]
