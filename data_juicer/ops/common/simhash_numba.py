"""Compiled SimHash (numba) for space tokenization, equal to hashing each shingle with MD5 (first
8 bytes, big-endian) and combining with simhash-pybind's ``compute``; used when numba is installed."""

from __future__ import annotations

import numpy as np

from data_juicer.ops.common import minhash_numba


def available() -> bool:
    """numba is installed, usable, and the kernel compiles (or loads from numba's cache)."""
    return minhash_numba.kernel_usable("SimHash", lambda: space_simhashes(["a b"], 1), "the Python path")


def space_simhashes(texts: list[str], window: int) -> np.ndarray:
    """uint64 SimHash of each prepared text: words between spaces, windows joined by one space."""
    from data_juicer.ops.common import minhash_kernels, simhash_kernels as k

    encoded = [t.encode("utf-8") for t in texts]
    buf, doc_off = minhash_numba._concat(encoded)
    starts, ends, doc_tok = minhash_kernels.space_tokens(buf, doc_off)
    out = np.zeros(len(texts), dtype=np.uint64)
    k.simhashes(buf, starts, ends, doc_tok, window, 32, k._S, k._K, k._G, out)
    return out
