"""MinHash signatures and LSH banding parameters, bit-identical to Data-Juicer 1.6.1's.

A shingle hashes to the first 4 bytes of its SHA-1 (little-endian). Permutation ``j`` maps a
hash ``h`` to ``((h * a_j + b_j) mod 2**64) mod (2**61 - 1)``, keeping the low 32 bits; the
``(a_j, b_j)`` are drawn in turn from ``numpy.random.RandomState(42)``. A signature is the
minimum of each permutation over a document's shingles (2**32 - 1 for no shingles).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

MERSENNE_PRIME = np.uint64((1 << 61) - 1)
MAX_HASH = 0xFFFFFFFF
_SHIFT = np.uint64(61)
# rows of one (rows x permutations) uint64 block: about 512 KiB, so a block's passes stay in cache
_BLOCK_ELEMENTS = 1 << 16


def permutations(num_perm: int, seed: int = 42) -> tuple[np.ndarray, np.ndarray]:
    """The ``(a, b)`` parameters of ``num_perm`` permutations, as uint64 arrays."""
    gen = np.random.RandomState(seed=seed)
    pairs = [(gen.randint(1, MERSENNE_PRIME, dtype=np.uint64), gen.randint(0, MERSENNE_PRIME, dtype=np.uint64))
             for _ in range(num_perm)]  # a and b are drawn alternately
    a, b = np.array(pairs, dtype=np.uint64).reshape(num_perm, 2).T
    return np.ascontiguousarray(a), np.ascontiguousarray(b)


def shingle_hashes(shingles) -> np.ndarray:
    """uint64 array of the 32-bit SHA-1 hash of each shingle (bytes)."""
    sha1 = hashlib.sha1
    digests = b"".join([sha1(s).digest() for s in shingles])
    return np.frombuffer(digests, dtype="<u4")[::5].astype(np.uint64)  # first 4 of each 20 bytes


def signatures(hashes: list[np.ndarray], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(documents x permutations) uint32 MinHash signatures of each document's shingle hashes."""
    num_perm = len(a)
    sig = np.full((len(hashes), num_perm), MAX_HASH, dtype=np.uint32)
    counts = np.fromiter(map(len, hashes), dtype=np.int64, count=len(hashes))
    docs = np.flatnonzero(counts)
    if not len(docs):
        return sig
    hv = np.concatenate([hashes[d] for d in docs])
    ends = np.cumsum(counts[docs])
    starts = ends - counts[docs]
    rows = max(1, _BLOCK_ELEMENTS // num_perm)
    x = np.empty((rows, num_perm), dtype=np.uint64)
    low = np.empty((rows, num_perm), dtype=np.uint64)
    vals = np.empty((rows, num_perm), dtype=np.uint32)
    for r0 in range(0, len(hv), rows):
        r1 = min(r0 + rows, len(hv))
        k = r1 - r0
        xk, lk, vk = x[:k], low[:k], vals[:k]
        np.multiply(hv[r0:r1, None], a, out=xk)  # wraps mod 2**64, as Data-Juicer's does
        np.add(xk, b, out=xk)
        # mod 2**61 - 1 without division: fold the top 3 bits onto the low 61 ...
        np.bitwise_and(xk, MERSENNE_PRIME, out=lk)
        np.right_shift(xk, _SHIFT, out=xk)
        np.add(xk, lk, out=xk)
        if xk.max() >= MERSENNE_PRIME:  # ... and subtract the prime once where that overshoots
            np.subtract(xk, MERSENNE_PRIME, out=xk, where=xk >= MERSENNE_PRIME)
        np.copyto(vk, xk, casting="unsafe")  # low 32 bits
        # documents with shingles in rows r0..r1, and where each starts within the block
        d0 = int(np.searchsorted(ends, r0, side="right"))
        d1 = int(np.searchsorted(starts, r1, side="left"))
        part = np.minimum.reduceat(vk, np.maximum(starts[d0:d1], r0) - r0, axis=0)
        rows_of = docs[d0:d1]
        sig[rows_of] = np.minimum(sig[rows_of], part)
    return sig


@lru_cache(maxsize=64)
def optimal_lsh_params(threshold: float, num_perm: int, false_positive_weight: float = 0.5,
                       false_negative_weight: float = 0.5) -> tuple[int, int]:
    """(bands, rows per band) with ``bands * rows <= num_perm`` minimising the weighted areas of
    false positives (below ``threshold``) and false negatives (above it) under the LSH
    S-curve ``1 - (1 - s**rows)**bands``; the first pair (bands, then rows, ascending) wins ties.

    The S-curve is a polynomial of degree ``bands * rows <= num_perm`` in ``s``, so Gauss-Legendre
    quadrature with ``num_perm // 2 + 1`` nodes integrates it exactly (to rounding).
    """
    bands = np.concatenate([np.full(num_perm // k, k) for k in range(1, num_perm + 1)]).astype(np.float64)
    rows = np.concatenate([np.arange(1, num_perm // k + 1) for k in range(1, num_perm + 1)]).astype(np.float64)
    nodes, weights = np.polynomial.legendre.leggauss(num_perm // 2 + 2)

    def integral(lo: float, hi: float, below: bool) -> np.ndarray:
        s = (hi - lo) / 2 * nodes + (hi + lo) / 2
        miss = (1 - s[None, :] ** rows[:, None]) ** bands[:, None]  # P(not a candidate) at similarity s
        return (hi - lo) / 2 * ((1 - miss if below else miss) @ weights)

    error = (false_positive_weight * integral(0.0, threshold, True)
             + false_negative_weight * integral(threshold, 1.0, False))
    # exact ties (e.g. threshold 0.5 with few permutations) would otherwise hang on rounding
    best = int(np.flatnonzero(error <= error.min() * (1 + 1e-12))[0])
    return int(bands[best]), int(rows[best])
