"""Handing back the resident pages of text read from a memory-mapped Arrow file.

A dataset's Arrow cache file is memory-mapped: every page of text a pass reads stays in the process's
resident set (RSS, and PSS, which the benchmarks report) until the mapping goes, although it is page
cache the kernel can drop. ``MappedPages(column).drop(batch)`` after a batch is done releases its pages
(``madvise(MADV_DONTNEED)``); a later read faults them in again from the file. Used by the MinHash op's
``hash_table``; an exporter or any pass reading a mapped column batch by batch can use it the same way.
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
        for chunk in getattr(col, "chunks", [col]):
            bufs = chunk.buffers()
            buf = bufs[2] if len(bufs) >= 3 else None
            if buf is None or not buf.size:
                continue
            for lo, hi in maps:
                if lo <= buf.address and buf.address + buf.size <= hi:
                    self.ranges.append((buf.address, buf.address + buf.size))
                    break
        self.ranges.sort()
        self._starts = [lo for lo, _ in self.ranges]

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

    def drop(self, arr) -> None:
        """Hand back the whole pages inside the text bytes of ``arr`` (a slice of the column given at
        construction: an Arrow string / large string array or chunked array)."""
        if not self.ranges:
            return
        for chunk in getattr(arr, "chunks", [arr]):
            bufs = chunk.buffers()
            if len(bufs) < 3 or bufs[2] is None or not len(chunk):
                continue
            offsets_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
            off = np.frombuffer(bufs[1], dtype=offsets_type)
            start = bufs[2].address + int(off[chunk.offset])
            end = bufs[2].address + int(off[chunk.offset + len(chunk)])
            k = bisect_right(self._starts, start) - 1  # the column chunk holding this text, if any
            if k < 0 or end > self.ranges[k][1]:
                continue
            self._release(start, end)
