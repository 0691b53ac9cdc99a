"""Handing freed memory back to the system."""

from __future__ import annotations


def release_freed_memory() -> None:
    """Return the blocks that allocators keep after memory is freed: Arrow's memory pool
    (``release_unused``) and glibc's free lists, one arena per thread (``malloc_trim``). It does
    nothing where either is missing. It takes well under a millisecond when little is free.
    Callers are a pass's end (MinHash's hashing threads) and the driver before it forks its pool
    workers, so that a forked worker does not start with freed heap mapped."""
    try:
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    except Exception:  # noqa: BLE001 - an allocator without it
        pass
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass
