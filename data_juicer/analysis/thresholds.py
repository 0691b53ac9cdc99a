"""What each filter of a recipe would drop, decided by the filter's own code.

The decision is the filter's ``process_batched`` on the computed stats, the very call
``dj-process`` makes, so "would drop 3.2 %" is what a run of that filter on the analysed data drops.
(In a full ``dj-process`` run the filters see the data after the recipe's mappers and after the
filters before them; here every filter sees all analysed samples.)
"""

from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from data_juicer.utils.constant import Fields

# parameters every op has (OP/Filter base): never shown as a filter's setting
_BASE_PARAMS: Optional[set] = None


def _base_params() -> set:
    global _BASE_PARAMS
    if _BASE_PARAMS is None:
        from data_juicer.ops.base import OP, Filter

        _BASE_PARAMS = set(inspect.signature(OP.__init__).parameters) | set(
            inspect.signature(Filter.__init__).parameters)
        _BASE_PARAMS -= {"min_closed_interval", "max_closed_interval", "reversed_range"}
    return _BASE_PARAMS


@dataclass
class FilterDrop:
    op: str
    index: int  # position among the analysed filters
    settings: dict  # the op's own parameters as set in the recipe (or its defaults)
    stat_keys: list = field(default_factory=list)
    total: int = 0
    dropped: Optional[int] = None
    error: Optional[str] = None

    @property
    def rate(self) -> Optional[float]:
        if self.dropped is None:
            return None
        return self.dropped / self.total if self.total else 0.0

    def settings_text(self) -> str:
        if not self.settings:
            return "(defaults)"
        return ", ".join(f"{k} {_fmt(v)}" for k, v in self.settings.items())

    def sentence(self) -> str:
        if self.dropped is None:
            return f"{self.op} {self.settings_text()}: cannot tell ({self.error})"
        return (f"{self.op} {self.settings_text()} would drop {100 * self.rate:.1f}% "
                f"({self.dropped:,} of {self.total:,})")

    def bounds(self) -> dict:
        """Numeric ``min_*``/``max_*`` settings (drawn as lines on the stat's plots)."""
        out = {}
        for k, v in self.settings.items():
            if (k.startswith("min_") or k.startswith("max_")) and isinstance(v, numbers.Real) \
                    and not isinstance(v, bool) and math.isfinite(v) and abs(v) < 1e15:
                out[k] = float(v)
        return out


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)) and len(v) > 6:
        return f"[{', '.join(map(str, v[:6]))}, ...]"
    return str(v)


def op_settings(op, given: Optional[dict] = None) -> dict:
    """The op's own parameters: those set in the recipe, else the constructor's defaults."""
    base = _base_params()
    if given:
        return {k: v for k, v in given.items() if k not in base}
    out = {}
    for name, p in inspect.signature(type(op).__init__).parameters.items():
        if name in base or name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        out[name] = getattr(op, name, p.default)
    return out


def probe_stat_keys(op, sample: dict) -> list:
    """The stat keys ``op`` writes, found by scoring one sample (a copy)."""
    batch = {k: [v] for k, v in sample.items() if k not in (Fields.stats, Fields.context)}
    batch[Fields.stats] = [{}]
    try:
        if op.uses:
            batch[Fields.context] = [{}]
        return list(op.score_batch(batch)[Fields.stats][0])
    except Exception:
        return []


def drop_rates(ops, stats_rows: list, given: Optional[list] = None, sample: Optional[dict] = None,
               batch_size: int = 10000) -> tuple[list[FilterDrop], Optional[np.ndarray]]:
    """Per filter: how many of the samples (their ``stats_rows``) it would drop.

    Returns the per-filter results and the combined keep mask (every filter keeps the sample),
    or None when no filter could decide.
    """
    n = len(stats_rows)
    results, combined = [], None
    for i, op in enumerate(ops):
        res = FilterDrop(op.name, i, op_settings(op, given[i] if given else None), total=n)
        if sample is not None:
            res.stat_keys = probe_stat_keys(op, sample)
        try:
            keep = np.empty(n, dtype=bool)
            for start in range(0, n, batch_size):
                chunk = stats_rows[start:start + batch_size]
                batch = {Fields.stats: [s if s is not None else {} for s in chunk]}
                decided = list(op.process_batched(batch))
                if len(decided) != len(chunk):
                    raise ValueError(f"decided {len(decided)} of {len(chunk)} samples")
                keep[start:start + len(chunk)] = decided
        except Exception as e:  # a filter that needs more than its stats to decide
            res.error = f"{type(e).__name__}: {e}"
            results.append(res)
            continue
        res.dropped = int(n - keep.sum())
        combined = keep if combined is None else combined & keep
        results.append(res)
    return results, combined
