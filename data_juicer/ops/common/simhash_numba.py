"""Compiled SimHash for space tokenization, equal to hashing each shingle with MD5 (first 8 bytes,
big-endian) and combining with simhash-pybind's ``compute``: the C library's (``simhash_c``) where a C
compiler built it, so no LLVM is mapped, else numba's kernel, with the same values."""

from __future__ import annotations

import numpy as np

from data_juicer.ops.common import minhash_numba, simhash_c


def available() -> bool:
    """The C library loads, or numba is usable and its kernel compiles (or loads from numba's cache)."""
    return simhash_c.available() or minhash_numba.kernel_usable(
        "SimHash", lambda: space_simhashes(["a b"], 1), "the Python path")


def space_simhashes(texts: list[str], window: int) -> np.ndarray:
    """uint64 SimHash of each prepared text: words between spaces, windows joined by one space."""
    if simhash_c.available():
        return simhash_c.space_simhashes(texts, window)
    return numba_space_simhashes(texts, window)


def numba_space_simhashes(texts: list[str], window: int) -> np.ndarray:
    """``space_simhashes`` by numba's kernel."""
    from data_juicer.ops.common import minhash_kernels, simhash_kernels as k

    encoded = [t.encode("utf-8") for t in texts]
    buf, doc_off = minhash_numba._concat(encoded)
    starts, ends, doc_tok = minhash_kernels.space_tokens(buf, doc_off)
    out = np.zeros(len(texts), dtype=np.uint64)
    k.simhashes(buf, starts, ends, doc_tok, window, 32, k._S, k._K, k._G, out)
    return out
