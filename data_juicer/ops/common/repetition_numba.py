"""Compiled character repetition ratios (numba) for a whole batch, equal to
``character_repetition_filter.char_rep_ratio_fast`` text by text; used when numba is installed."""

from __future__ import annotations

import numpy as np

from data_juicer.ops.common import minhash_numba


def available() -> bool:
    """numba is installed, usable, and the kernel compiles (or loads from numba's cache)."""
    return minhash_numba.kernel_usable("repetition ratio", lambda: char_rep_ratios(["abcabcabc"], 2), "numpy")


def char_rep_ratios(texts: list[str], n: int) -> np.ndarray:
    """float64 character ``n``-gram repetition ratio of each text, in one compiled call."""
    from data_juicer.ops.common import repetition_kernels as k

    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    out = np.empty(len(texts), dtype=np.float64)
    k.char_rep_ratios(codes, offsets, n, out)
    return out
