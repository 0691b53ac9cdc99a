"""Handing back the resident pages of text read from a memory-mapped Arrow file.

A dataset's Arrow cache file is memory-mapped: every page of text a pass reads stays in the process's
resident set (RSS, and PSS, which the benchmarks report) until the mapping goes, although it is page
cache the kernel can drop. ``MappedPages(column).drop(batch)`` after a batch is done releases its pages
(``madvise(MADV_DONTNEED)``); a later read faults them in again from the file. Used by the MinHash op's
``hash_table``; the exporter hands back each written batch's rows (``drop_rows``), and the lean load the
whole file once it is validated (``drop_file``).
"""
from __future__ import annotations

from bisect import bisect_right

import numpy as np
import pyarrow as pa


class MappedPages:
    """Hands back the resident pages of Arrow string arrays whose text lies in a read-only file mapping
    (``madvise(MADV_DONTNEED)``: a later read faults them in again from the file, so nothing changes but
    the process's RSS / PSS). Only whole pages inside an array's text bytes, and only inside mappings
    that ``/proc/self/maps`` shows as a file without write permission: heap or anonymous memory (an
    in-memory table), where this would lose data, is never touched. A no-op off Linux."""

    MADV_DONTNEED = 4

    def __init__(self, col):
        self.ranges = []
        try:
            import ctypes
            import mmap

            self.page = mmap.PAGESIZE
            self.madvise = ctypes.CDLL(None, use_errno=True).madvise
            self.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
            with open("/proc/self/maps", encoding="utf-8") as f:
                maps = []
                for line in f:
                    parts = line.split(maxsplit=5)
                    if len(parts) == 6 and parts[5].strip() and not parts[5].startswith("[") and "w" not in parts[1]:
                        lo, hi = (int(x, 16) for x in parts[0].split("-"))
                        maps.append((lo, hi))
        except (OSError, AttributeError, ValueError):
            return
        self._rows = []  # (first row, rows, text address, offsets) of each mapped chunk, in row order
        first = 0
        for chunk in getattr(col, "chunks", [col]):
            bufs = chunk.buffers()
            buf = bufs[2] if len(bufs) >= 3 else None
            n, start = len(chunk), first
            first += n
            if buf is None or not buf.size:
                continue
            for lo, hi in maps:
                if lo <= buf.address and buf.address + buf.size <= hi:
                    self.ranges.append((buf.address, buf.address + buf.size))
                    off = np.frombuffer(bufs[1], dtype=_offsets_type(chunk))[chunk.offset:chunk.offset + n + 1]
                    self._rows.append((start, n, buf.address, off))
                    break
        self.ranges.sort()
        self._starts = [lo for lo, _ in self.ranges]
        self._row_starts = [r[0] for r in self._rows]

    def _release(self, start: int, end: int) -> None:
        lo = -(-start // self.page) * self.page  # whole pages inside the text only
        hi = end // self.page * self.page
        if hi > lo:
            self.madvise(lo, hi - lo, self.MADV_DONTNEED)

    def drop_all(self) -> None:
        """Hand back the whole pages inside the text bytes of every chunk of the column given at
        construction (one call per chunk)."""
        for start, end in self.ranges:
            self._release(start, end)

    def drop_rows(self, lo: int, hi: int) -> None:
        """Hand back the whole pages inside the text bytes of rows ``[lo, hi)`` of the column given at
        construction: the chunks holding them are found by bisection, one call per chunk touched (a
        written batch of a long export costs the same whatever the number of chunks)."""
        if not self._rows or hi <= lo:
            return
        k = max(0, bisect_right(self._row_starts, lo) - 1)
        while k < len(self._rows):
            start, n, address, off = self._rows[k]
            if start >= hi:
                break
            a, b = max(lo, start) - start, min(hi, start + n) - start
            if b > a:
                self._release(address + int(off[a]), address + int(off[b]))
            k += 1

    def drop(self, arr) -> None:
        """Hand back the whole pages inside the text bytes of ``arr`` (a slice of the column given at
        construction: an Arrow string / large string array or chunked array)."""
        if not self.ranges:
            return
        for chunk in getattr(arr, "chunks", [arr]):
            bufs = chunk.buffers()
            if len(bufs) < 3 or bufs[2] is None or not len(chunk):
                continue
            off = np.frombuffer(bufs[1], dtype=_offsets_type(chunk))
            start = bufs[2].address + int(off[chunk.offset])
            end = bufs[2].address + int(off[chunk.offset + len(chunk)])
            k = bisect_right(self._starts, start) - 1  # the column chunk holding this text, if any
            if k < 0 or end > self.ranges[k][1]:
                continue
            self._release(start, end)


def _offsets_type(chunk):
    return np.int64 if pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type) else np.int32
