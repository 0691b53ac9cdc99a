"""Ops made of other ops: fused filters (``op_fusion``) and user-declared fused pipelines.

``FusedFilter`` is what ``op_fusion: true`` makes of filters that share an intermediate value
(words, lines...): one op named ``OpFusion:(a,b,...)`` as in Data-Juicer, whose members share the
value through ``__dj__context__`` and drop rows as soon as one of them rejects them.
``SequentialOps`` runs a list of row-wise ops one after another on each batch; the registered
``general_fused_op`` and ``fused_sequential_batch_op`` are thin wrappers around it.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from data_juicer.ops.base import OP, Filter
from data_juicer.utils.batch import take_mask
from data_juicer.utils.constant import Fields


def build_op_list(specs: Iterable[Any], who: str, defaults: Optional[dict] = None) -> list[OP]:
    """Row-wise ops from recipe-style entries (``{name: {params}}``, a bare name, or built ops),
    built by ``build_ops`` with ``defaults`` (the enclosing op's common keys)."""
    from data_juicer.ops.build import build_ops

    return build_ops(specs, defaults, where=who, row_wise_only=True)


def _union_uses(ops: Iterable[OP]) -> tuple[str, ...]:
    out: list[str] = []
    for op in ops:
        out.extend(u for u in op.uses if u not in out)
    return tuple(out)


class FusedFilter(Filter):
    """Filters sharing an intermediate value, run as one op named ``OpFusion:(a,b,...)``."""

    def __init__(self, filters: list[Filter], **kwargs):
        super().__init__(**kwargs)
        self.filters = list(filters)
        self.uses = _union_uses(self.filters)
        self.fused_name = "OpFusion:(%s)" % ",".join(f.name for f in self.filters)
        self.batch_size = min(f.batch_size for f in self.filters)
        self.skip_op_error = all(f.skip_op_error for f in self.filters)

    @property
    def name(self) -> str:
        return self.fused_name

    @property
    def recipe_ops(self) -> int:
        return len(self.filters)

    def compute_stats_batched(self, samples, context=False):
        for f in self.filters:
            samples = f.score_batch(samples)
        return samples

    def process_batched(self, samples):
        keep = [True] * len(samples[Fields.stats])
        for f in self.filters:
            keep = [a and b for a, b in zip(keep, f.process_batched(samples))]
        return keep

    def run_batch(self, samples):
        # member by member, dropping rejected rows at once: later members see only survivors
        for f in self.filters:
            samples = f.run_batch(samples)
            if not samples or not len(next(iter(samples.values()))):
                break
        return samples


class SequentialOps(OP):
    """Row-wise ops applied one after another to each batch, in one pass."""

    op_type = "other"
    modality = "general"

    def _setup(self, ops: list[OP], label: str, cleanup_columns: Optional[list[str]] = None) -> None:
        if not ops:
            raise ValueError(f"{label}: give at least one op to fuse")
        self.ops = ops
        self.uses = _union_uses(ops)
        self.cleanup_columns = list(cleanup_columns or [])
        self.label = label

    @property
    def recipe_ops(self) -> int:
        return 1

    def run_batch(self, samples):
        for op in self.ops:
            if isinstance(op, Filter):
                samples, keep = op.decide_batch(samples)
                if not all(keep):
                    samples = take_mask(samples, keep)
            else:
                samples = op.run_batch(samples)
            if not samples or not len(next(iter(samples.values()))):
                break
        for col in self.cleanup_columns:
            samples.pop(col, None)
        return samples

    @property
    def is_row_wise(self) -> bool:
        return True
