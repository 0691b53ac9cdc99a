"""Compiled SimHash (numba) for space tokenization, equal to hashing each shingle with MD5 (first
8 bytes, big-endian) and combining with simhash-pybind's ``compute``; used when numba is installed."""

from __future__ import annotations

import numpy as np

from data_juicer.ops.common import minhash_numba

_USABLE = None


def available() -> bool:
    global _USABLE
    if _USABLE is None:
        _USABLE = False
        if minhash_numba.available():
            try:
                space_simhashes(["a b"], 1)
                _USABLE = True
            except Exception as e:  # noqa: BLE001 - any failure means: use the Python path
                from loguru import logger

                logger.warning(f"compiled SimHash unusable ({type(e).__name__}: {e}); using the Python path")
    return _USABLE


def space_simhashes(texts: list[str], window: int) -> np.ndarray:
    """uint64 SimHash of each prepared text: words between spaces, windows joined by one space."""
    from data_juicer.ops.common import minhash_kernels, simhash_kernels as k

    encoded = [t.encode("utf-8") for t in texts]
    buf, doc_off = minhash_numba._concat(encoded)
    starts, ends, doc_tok = minhash_kernels.space_tokens(buf, doc_off)
    out = np.zeros(len(texts), dtype=np.uint64)
    k.simhashes(buf, starts, ends, doc_tok, window, 32, k._S, k._K, k._G, out)
    return out
