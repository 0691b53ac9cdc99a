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


def row_index_dtype(n: int) -> np.dtype:
    """int32 for row numbers below 2**31 (half the memory of int64), int64 otherwise."""
    return np.dtype(np.int32) if n < 2**31 else np.dtype(np.int64)


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


def _exact_groups(blocks: list[np.ndarray], starts: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """For the given rows (ascending) of one key group, the first row with equal values of each (exact)."""
    values = _rows(blocks, starts, rows)
    seen: dict[bytes, int] = {}
    return np.array([seen.setdefault(v.tobytes(), int(r)) for r, v in zip(rows.tolist(), values)], dtype=np.int64)


def first_rows(blocks: list[np.ndarray], want_head: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """The first row of each distinct value of the blocks (taken in order as one ``(n, k)`` table),
    ascending (int32 below 2**31 rows), and with ``want_head`` each row's first equal row (int64).

    A 64-bit mix of each row's values keeps its top ``64 - b`` bits and the row number in the low ``b``
    bits (``b`` bits hold ``n - 1``); these packed keys are sorted in place, so a group of equal keys
    lies together with its rows ascending. Consecutive members of a group are compared exactly; a group
    in which two differ (a truncated-key collision, ~n**2 / 2**(65-b) expected) is split on the exact
    values. Memory: the packed keys (8 B a row), a row mask (1 B) and slices: ~9 B a row at the peak,
    then the result."""
    n = sum(len(b) for b in blocks)
    itype = row_index_dtype(n)
    if not n:
        return np.zeros(0, dtype=itype), (np.zeros(0, dtype=np.int64) if want_head else None)
    bits = max(1, (n - 1).bit_length())
    low = np.uint64((1 << bits) - 1)
    packed = np.empty(n, dtype=np.uint64)
    starts = np.cumsum([0] + [len(b) for b in blocks])
    for i, b in enumerate(blocks):
        for lo in range(0, len(b), _CHECK_ROWS):
            part = b[lo:lo + _CHECK_ROWS]
            at = starts[i] + lo
            k = _keys([part])
            k &= ~low
            k |= np.arange(at, at + len(part), dtype=np.uint64)
            packed[at:at + len(part)] = k
    packed.sort()
    is_first = np.zeros(n, dtype=bool)
    head = np.empty(n, dtype=np.int64) if want_head else None
    split = []  # (first, last + 1) sorted positions of groups whose members are not all equal
    carry = 0  # sorted position of the group start before the slice
    for lo in range(0, n, _CHECK_ROWS):
        hi = min(n, lo + _CHECK_ROWS)
        p = packed[max(lo - 1, 0):hi]
        key = p >> np.uint64(bits)
        rows = (p & low).astype(np.int64)
        if lo:
            key, rows, same = key[1:], rows[1:], key[1:] == key[:-1]
            prev_rows = (p[:-1] & low).astype(np.int64)
        else:
            same = np.r_[False, key[1:] == key[:-1]]
            prev_rows = np.r_[0, rows[:-1]]
        is_first[rows[~same]] = True
        dup = np.flatnonzero(same)
        if len(dup):
            differ = (_rows(blocks, starts, rows[dup]) != _rows(blocks, starts, prev_rows[dup])).any(axis=1)
            for pos in (lo + dup[differ]).tolist():
                if split and split[-1][1] > pos:
                    continue
                g = int(packed[pos] >> np.uint64(bits))
                s, e = pos, pos + 1
                while s > 0 and int(packed[s - 1] >> np.uint64(bits)) == g:
                    s -= 1
                while e < n and int(packed[e] >> np.uint64(bits)) == g:
                    e += 1
                split.append((s, e))
        if want_head:
            at = np.where(~same, np.arange(lo, hi), 0)
            at[0] = max(at[0], carry)
            at = np.maximum.accumulate(at)
            head[rows] = (packed[at] & low).astype(np.int64)
            carry = int(at[-1])
    for s, e in split:
        rows = (packed[s:e] & low).astype(np.int64)
        h = _exact_groups(blocks, starts, rows)
        is_first[rows[h == rows]] = True
        if want_head:
            head[rows] = h
    del packed
    return mask_rows(is_first), head


def mask_rows(mask: np.ndarray) -> np.ndarray:
    """``np.flatnonzero(mask)`` as int32 below 2**31 rows, found a slice at a time (no int64 copy of it all)."""
    out = np.empty(int(np.count_nonzero(mask)), dtype=row_index_dtype(len(mask)))
    at = 0
    for lo in range(0, len(mask), 1 << 20):
        part = np.flatnonzero(mask[lo:lo + (1 << 20)])
        out[at:at + len(part)] = part + lo
        at += len(part)
    return out
