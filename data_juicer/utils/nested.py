"""Dotted-key access into nested sample fields (``meta.date``, ``__dj__stats__.text_len``)."""

from __future__ import annotations

from typing import Any

_MISSING = object()


def get_nested(sample: dict, key: str, default: Any = None) -> Any:
    """Value at ``key``; a literal key containing dots wins over the dotted path."""
    if key in sample:
        return sample[key]
    cur: Any = sample
    for part in key.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return default
    return cur


def has_nested(sample: dict, key: str) -> bool:
    return get_nested(sample, key, _MISSING) is not _MISSING


def column_nested(samples: dict[str, list], key: str, default: Any = None) -> list:
    """One column of a columnar batch, following dots into struct columns."""
    if key in samples:
        return samples[key]
    head, _, rest = key.partition(".")
    if head not in samples or not rest:
        n = len(next(iter(samples.values()))) if samples else 0
        return [default] * n
    return [get_nested(v, rest, default) if isinstance(v, dict) else default for v in samples[head]]
