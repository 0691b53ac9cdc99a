"""All pairs of 64-bit SimHashes within a Hamming distance, in numpy (bounded memory, no Python ints).

The same set of pairs as simhash-pybind's ``find_all(values, num_blocks, hamming_distance)``: the 64 bits
are cut into ``num_blocks`` blocks; two values at most ``hamming_distance`` bits apart agree on at least
``num_blocks - hamming_distance`` whole blocks (pigeonhole), so for each choice of that many blocks the
values are sorted on those blocks' bits and each run of equal keys is compared pair by pair. The set
found is "every pair of the distinct values within the distance", whatever the block layout.

Memory: a few 8-byte arrays of the values (key, order, candidates), ~40 B a value, against ~170 B for
``find_all`` (a Python int per value, the C++ tables and the Python set of tuples it returns).
"""

from __future__ import annotations

from itertools import combinations, pairwise

import numpy as np


def _block_masks(num_blocks: int) -> list[np.uint64]:
    """Bit masks of ``num_blocks`` contiguous blocks covering the 64 bits (widths differ by at most 1)."""
    edges = [round(64 * i / num_blocks) for i in range(num_blocks + 1)]
    return [np.uint64(((1 << (hi - lo)) - 1) << lo) for lo, hi in pairwise(edges)]


def near_pairs(values: np.ndarray, num_blocks: int, hamming_distance: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)``, ``i < j``, of the ``values`` (uint64, distinct) that differ in at most
    ``hamming_distance`` bits; each pair once, sorted by ``(i, j)``."""
    values = np.asarray(values, dtype=np.uint64)
    n = len(values)
    if not hamming_distance < num_blocks <= 64:
        raise ValueError(f"num_blocks ({num_blocks}) must be greater than hamming_distance ({hamming_distance}) "
                         "and at most 64")
    found = []
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    masks = _block_masks(num_blocks)
    for chosen in combinations(range(num_blocks), num_blocks - hamming_distance):
        mask = np.uint64(0)
        for b in chosen:
            mask |= masks[b]
        key = values & mask
        order = np.argsort(key, kind="stable")
        key = key[order]
        cand = np.flatnonzero(key[1:] == key[:-1])  # positions whose next entry shares the key
        d = 1
        while len(cand):
            a, b = order[cand], order[cand + d]
            ok = np.bitwise_count(values[a] ^ values[b]) <= hamming_distance
            if ok.any():
                a, b = a[ok], b[ok]
                found.append(np.minimum(a, b) * n + np.maximum(a, b))
            d += 1
            cand = cand[cand + d < n]
            cand = cand[key[cand + d] == key[cand]]  # runs are contiguous: still inside the run
        del key, order
    if not found:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    code = np.unique(np.concatenate(found))
    return code // n, code % n
