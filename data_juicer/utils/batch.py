"""Helpers for columnar batches (``dict[str, list]``)."""

from __future__ import annotations

from itertools import compress
from typing import Iterable, Iterator


def batch_len(samples: dict[str, list]) -> int:
    for v in samples.values():
        return len(v)
    return 0


def take_mask(samples: dict[str, list], mask: list[bool]) -> dict[str, list]:
    """Rows of ``samples`` where ``mask`` is true."""
    return {k: list(compress(v, mask)) for k, v in samples.items()}


def take_rows(samples: dict[str, list], rows: Iterable[int]) -> dict[str, list]:
    rows = list(rows)
    return {k: [v[i] for i in rows] for k, v in samples.items()}


def iter_rows(samples: dict[str, list]) -> Iterator[dict]:
    keys = list(samples)
    cols = [samples[k] for k in keys]
    for values in zip(*cols):
        yield dict(zip(keys, values))


def rows_to_batch(rows: list[dict], keys: Iterable[str] | None = None) -> dict[str, list]:
    """Columnar batch from rows; the keys are the union of all rows' keys (missing -> None)."""
    if keys is None:
        seen: dict[str, None] = {}
        for r in rows:
            for k in r:
                seen.setdefault(k, None)
        keys = seen
    return {k: [r.get(k) for r in rows] for k in keys}


def concat_batches(batches: list[dict[str, list]]) -> dict[str, list]:
    keys: dict[str, None] = {}
    for b in batches:
        for k in b:
            keys.setdefault(k, None)
    out: dict[str, list] = {k: [] for k in keys}
    for b in batches:
        n = batch_len(b)
        for k in keys:
            out[k].extend(b[k] if k in b else [None] * n)
    return out
