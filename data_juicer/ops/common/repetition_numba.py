"""Compiled character repetition ratios (numba) for a whole batch, equal to
``character_repetition_filter.char_rep_ratio_fast`` text by text; used when numba is installed."""

from __future__ import annotations

import numpy as np

from data_juicer.ops.common import minhash_numba

_USABLE = None


def available() -> bool:
    """numba is installed, usable, and the kernel compiles (or loads from numba's cache)."""
    global _USABLE
    if _USABLE is None:
        _USABLE = False
        if minhash_numba.available():
            try:
                char_rep_ratios(["abcabcabc"], 2)
                _USABLE = True
            except Exception as e:  # noqa: BLE001 - any failure means: use the numpy path
                from loguru import logger

                logger.warning(f"compiled repetition ratio unusable ({type(e).__name__}: {e}); using numpy")
    return _USABLE


def char_rep_ratios(texts: list[str], n: int) -> np.ndarray:
    """float64 character ``n``-gram repetition ratio of each text, in one compiled call."""
    from data_juicer.ops.common import repetition_kernels as k

    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    out = np.empty(len(texts), dtype=np.float64)
    k.char_rep_ratios(codes, offsets, n, out)
    return out
