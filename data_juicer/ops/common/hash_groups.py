"""Grouping of equal fixed-width hash values with bounded memory (numpy only), for the dedups' global steps.

A dedup's global step needs, for each row, the first row with the same hash. Grouping a string column with
Arrow's ``dictionary_encode`` builds a hash table and a copy of the distinct strings (~390 B a row for
32-character MD5 hex, measured at 288k rows); here the values stay where they are (memory-mapped Arrow
buffers viewed as ``(n, k)`` uint32 blocks), a 64-bit mix of each row is sorted, and each row is checked
against its group's first row, a block at a time: ~40 B a row at the peak.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_MIX = np.uint64(0x9E3779B97F4A7C15)
_CHECK_ROWS = 1 << 16  # rows compared with their group's first row at a time


def fixed_width_blocks(col: pa.ChunkedArray, width: int) -> list[np.ndarray] | None:
    """Zero-copy ``(n_i, width // 4)`` uint32 views of a string/binary column's chunks when every value is
    exactly ``width`` bytes (a multiple of 4) and none is null; None otherwise (the caller groups another way)."""
    if width % 4:
        return None
    blocks = []
    for chunk in col.chunks:
        n = len(chunk)
        if not n:
            continue
        if chunk.null_count or not (pa.types.is_string(chunk.type) or pa.types.is_binary(chunk.type)
                                    or pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)):
            return None
        if pc.min_max(pc.binary_length(chunk)).as_py() != {"min": width, "max": width}:
            return None
        large = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64 if large else np.int32)
        offsets = offsets[chunk.offset:chunk.offset + n + 1]
        data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
        blocks.append(data.reshape(n, width).view("<u4"))
    return blocks


def _keys(blocks: list[np.ndarray]) -> np.ndarray:
    """One 64-bit mix of each row's values (equal rows, equal keys)."""
    n = sum(len(b) for b in blocks)
    key = np.zeros(n, dtype=np.uint64)
    start = 0
    with np.errstate(over="ignore"):
        for b in blocks:
            k = key[start:start + len(b)]
            for j in range(b.shape[1]):
                k ^= b[:, j].astype(np.uint64)
                k *= _MIX
                k ^= k >> np.uint64(29)
            start += len(b)
    return key


def _rows(blocks: list[np.ndarray], starts: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The values of the given (global) rows, copied out of the blocks."""
    which = np.searchsorted(starts, rows, side="right") - 1
    out = np.empty((len(rows), blocks[0].shape[1]), dtype=np.uint32)
    for i in np.unique(which):
        sel = which == i
        out[sel] = blocks[i][rows[sel] - starts[i]]
    return out


def first_equal_rows(blocks: list[np.ndarray]) -> np.ndarray | None:
    """For each row of the blocks (taken in order as one ``(n, k)`` table), the first row with equal values
    (int64); None if two different rows share a 64-bit key (then group on the exact values instead)."""
    n = sum(len(b) for b in blocks)
    if not n:
        return np.zeros(0, dtype=np.int64)
    key = _keys(blocks)
    order = np.argsort(key, kind="stable")  # stable: each group's first entry is its smallest row
    sorted_key = key[order]
    del key
    group_starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
    del sorted_key
    head = np.empty(n, dtype=np.int64)
    head[order] = np.repeat(order[group_starts], np.diff(np.r_[group_starts, n]))
    del order, group_starts
    starts = np.cumsum([0] + [len(b) for b in blocks])
    for i, b in enumerate(blocks):  # exact check, a slice at a time (the heads may lie in earlier blocks)
        for lo in range(0, len(b), _CHECK_ROWS):
            part = b[lo:lo + _CHECK_ROWS]
            h = head[starts[i] + lo:starts[i] + lo + len(part)]
            if (part != _rows(blocks, starts, h)).any():
                return None
    return head
