"""The adapter: probe a small batch through the ops, then fuse, reorder and size the work.

``probe_small_batch`` runs the first samples (as many as about ``probe_budget_s`` CPU seconds
allow, judged on a pilot of 32 that also pays each op's first-call costs such as loading a model,
between 100 and 1000) through each row-wise op in recipe order and records per op: CPU seconds per
sample, throughput, selectivity (the share a filter keeps, measured on the same input for every
filter of a run so they can be compared) and peak Python memory per sample (``tracemalloc``, on the
pilot's rows only: it slows the code it watches). The results are logged and saved as
``probe.json`` in the job folder.

When a row-wise op runs a model (``uses_model``: CLIP, a ViT classifier, a detector...), every probed
row is a real inference whose result is thrown away, so the pilot is ``model_probe_samples`` (8) rows,
and when those show that ``min_probe_samples`` rows would cost more than the budget, the probe stays
on those 8 rows: about 24 inferences per model op (pilot, probe, memory probe) instead of 164. Its
selectivities then come from 8 samples, a coarse guide to the order (the output does not depend on it).

``optimize`` (``op_fusion: true``):
  * filters of a run that share an intermediate value (words, lines...) become one
    ``OpFusion:(a,b)`` op, as in Data-Juicer (they share the value through the context);
  * with ``fusion_strategy: probe``, the filters of each run of consecutive filters are ordered
    by expected cost per dropped sample, ``seconds_per_sample / (1 - selectivity)``: cheap,
    selective filters first. A sample is kept only if every filter keeps it, and every filter
    still scores every kept sample, so the output is the same as in recipe order (the executor
    restores the recipe's order of the keys in ``__dj__stats__``).
  * with ``fusion_strategy: probe``, a filter that the probe saw drop samples and whose fields
    are known (``fields_read``, e.g. ``specified_field_filter`` on ``meta.source``) moves ahead
    of the mappers before it that cannot change those fields (``fields_written``, e.g. the text
    cleaning mappers), so it joins the filters there and those mappers see fewer samples. The
    kept samples and their values are the same; a mapper error on a sample such a filter drops
    first is no longer recorded in the error ledger.
  Other mappers, deduplicators and dataset-level ops stay where they are.

``batch_size_for`` (``adaptive_batch_size: true``) sizes a stage's batches from the probe: the recipe's
batch size unless a batch of it is under ``min_batch_seconds`` of work (raised) or over ``target_seconds``
or a memory budget (lowered); ``num_proc_for`` caps the
worker count by the free memory.
"""

from __future__ import annotations

import json
import math
import os
import time
import tracemalloc
from dataclasses import asdict, dataclass
from typing import Optional

from loguru import logger

from data_juicer.ops.base import OP, Filter, Mapper
from data_juicer.ops.fused import FusedFilter
from data_juicer.utils.batch import batch_len
from data_juicer.utils.constant import Fields


@dataclass
class OpProbe:
    name: str
    index: int  # position in the op list
    kind: str  # mapper | filter | dedup-hash | other
    samples_in: int
    samples_out: int  # for filters: how many it would keep of samples_in
    seconds: float
    seconds_per_sample: float
    speed: float  # samples per second
    selectivity: float  # kept / in (1.0 for non-filters)
    peak_bytes_per_sample: float
    stats_keys: tuple = ()
    error: Optional[str] = None


def _copy_batch(samples: dict[str, list]) -> dict[str, list]:
    out = {k: list(v) for k, v in samples.items()}
    if Fields.stats in out:
        out[Fields.stats] = [dict(s) if isinstance(s, dict) else {} for s in out[Fields.stats]]
    if Fields.context in out:
        out[Fields.context] = [{} for _ in out[Fields.context]]
    return out


def _kind(op: OP) -> str:
    if isinstance(op, Filter):
        return "filter"
    return {"mapper": "mapper", "deduplicator": "dedup-hash"}.get(op.op_type, "other")


class Adapter:
    def __init__(self, cfg: dict, job_dir: Optional[str] = None, probe_samples: int = 1000,
                 memory_probe_samples: int = 100, target_seconds: float = 2.0, batch_memory_mb: float = 512.0,
                 min_batch_seconds: float = 0.05,
                 probe_budget_s: float = 0.3, min_probe_samples: int = 100, pilot_samples: int = 32,
                 model_probe_samples: int = 8):
        self.cfg = cfg
        self.job_dir = job_dir
        self.probe_samples = probe_samples
        # the memory probe runs on the first rows the op sees, at most this many and no more than the pilot
        self.memory_probe_samples = memory_probe_samples
        self.target_seconds = target_seconds
        self.min_batch_seconds = min_batch_seconds
        self.batch_memory_mb = batch_memory_mb
        # the probe runs on as many of the first samples as about probe_budget_s CPU seconds allow
        # (judged on pilot_samples first), at least min_probe_samples, at most probe_samples
        self.probe_budget_s = probe_budget_s
        self.min_probe_samples = min_probe_samples
        self.pilot_samples = pilot_samples
        # with a model op among them: the pilot's size, and the probe's when the pilot shows the floor too dear
        self.model_probe_samples = model_probe_samples
        self._op_at: dict[int, int] = {}  # probe index -> id() of the op it measured
        self.probe_seconds = self.probe_cpu_seconds = 0.0

    # -- probing ---------------------------------------------------------------------------
    def take_batch(self, ds) -> dict[str, list]:
        n = min(self.probe_samples, ds.num_rows)
        return ds.select(range(n)).to_dict() if n else {}

    def probe_small_batch(self, ds, ops: list[OP]) -> list[OpProbe]:
        """Time each row-wise op of ``ops`` on the first samples (of a Hugging Face dataset, or a
        columnar batch of them); dataset-level ops are skipped."""
        self._op_at = {i: id(op) for i, op in enumerate(ops)}
        started, cpu_started = time.perf_counter(), time.process_time()
        batch = ds if isinstance(ds, dict) else self.take_batch(ds)  # a batch already taken by the backend
        probes: list[OpProbe] = []
        if not batch or not batch_len(batch):
            return probes
        batch = self._sized(batch, ops)
        needs_context = any(op.uses for op in ops)
        for i, op in enumerate(ops):
            if not op.is_row_wise:
                continue
            n_in = batch_len(batch)
            if not n_in:
                break
            work = _copy_batch(batch)
            if needs_context:
                work[Fields.context] = [{} for _ in range(n_in)]
            keys_before = set(work[Fields.stats][0]) if Fields.stats in work else set()
            t = time.process_time()  # CPU seconds: what an op costs, whatever else loads the machine
            try:
                if isinstance(op, Filter):
                    out, keep = op.decide_batch(work)
                    n_out = sum(map(bool, keep))
                else:
                    out = op.run_batch(work)
                    n_out = batch_len(out)
            except Exception as e:  # a probe failure only disables optimisation around this op
                probes.append(OpProbe(op.name, i, _kind(op), n_in, n_in, 0.0, 0.0, 0.0, 1.0, 0.0,
                                      error=f"{type(e).__name__}: {e}"))
                logger.warning(f"probe: {op.name} failed on the probe batch ({type(e).__name__}: {e})")
                continue
            secs = time.process_time() - t
            peak = self._peak_bytes_per_sample(op, batch)
            new_keys = ()
            if isinstance(op, Filter) and out.get(Fields.stats):
                new_keys = tuple(k for k in out[Fields.stats][0] if k not in keys_before)
            probes.append(OpProbe(op.name, i, _kind(op), n_in, n_out, secs, secs / n_in,
                                  n_in / secs if secs > 0 else float("inf"),
                                  n_out / n_in if isinstance(op, Filter) else 1.0, peak, new_keys))
            if not isinstance(op, Filter):  # filters are measured side by side on the same input
                out.pop(Fields.context, None)
                batch = out
        self.probe_seconds = time.perf_counter() - started
        self.probe_cpu_seconds = time.process_time() - cpu_started
        logger.info(f"probe: {probes[0].samples_in if probes else 0} samples, {batch_len(batch) if batch else 0} "
                    f"left after {len(probes)} ops, {self.probe_seconds:.2f}s in all "
                    f"({self.probe_cpu_seconds:.2f}s CPU, memory probe included)")
        self._report(probes)
        return probes

    def _sized(self, batch: dict[str, list], ops: list[OP]) -> dict[str, list]:
        """The first samples of ``batch``: as many as the probe budget allows, from a pilot run
        of every row-wise op on ``pilot_samples`` of them (each op on the same pilot rows)."""
        n_all = batch_len(batch)
        models = any(op.is_row_wise and op.uses_model for op in ops)
        pilot = min(self.model_probe_samples if models else self.pilot_samples, n_all)
        if n_all <= (pilot if models else max(pilot, self.min_probe_samples)):
            return batch
        work = {k: v[:pilot] for k, v in batch.items()}
        t = time.process_time()
        for op in ops:
            if not op.is_row_wise:
                continue
            try:
                small = _copy_batch(work)
                if op.uses:
                    small[Fields.context] = [{} for _ in range(pilot)]
                if isinstance(op, Filter):
                    op.decide_batch(small)
                else:  # a mapper's output is what the next ops see
                    work = op.run_batch(small)
                    work.pop(Fields.context, None)
            except Exception:  # noqa: BLE001 - the probe itself reports failures
                continue
            if not batch_len(work):
                break
        per_sample = (time.process_time() - t) / pilot
        n = n_all if per_sample <= 0 else int(self.probe_budget_s / per_sample)
        floor = self.min_probe_samples
        if models and per_sample * floor > self.probe_budget_s:  # model inference: stay on the pilot's rows
            floor = pilot
        n = max(floor, min(n, n_all))
        return batch if n >= n_all else {k: v[:n] for k, v in batch.items()}

    def _peak_bytes_per_sample(self, op: OP, batch: dict[str, list]) -> float:
        n = min(self.memory_probe_samples, self.pilot_samples, batch_len(batch))
        if not n:
            return 0.0
        small = _copy_batch({k: v[:n] for k, v in batch.items()})
        if op.uses:
            small[Fields.context] = [{} for _ in range(n)]
        started = not tracemalloc.is_tracing()
        if started:
            tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        try:
            op.decide_batch(small) if isinstance(op, Filter) else op.run_batch(small)
            peak = tracemalloc.get_traced_memory()[1] - base
        except Exception:
            peak = 0
        finally:
            if started:
                tracemalloc.stop()
        return max(peak, 0) / n

    def _report(self, probes: list[OpProbe]) -> None:
        if not probes:
            return
        lines = [f"{'op':48s} {'kind':10s} {'in':>6s} {'kept':>6s} {'samples/s':>10s} {'KB/sample':>9s}"]
        for p in probes:
            lines.append(f"{p.name[:48]:48s} {p.kind:10s} {p.samples_in:6d} {p.samples_out:6d} "
                         f"{p.speed:10.0f} {p.peak_bytes_per_sample / 1024:9.1f}")
        logger.info("probe of the first samples:\n" + "\n".join(lines))
        if self.job_dir:
            path = os.path.join(self.job_dir, "probe.json")
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump([asdict(p) for p in probes], f, indent=2, default=str)
            os.replace(tmp, path)

    # -- fusion and reordering -----------------------------------------------------------------
    def optimize(self, ops: list[OP], probes: Optional[list[OpProbe]] = None,
                 reorder: bool = True) -> list[OP]:
        """Fuse filters sharing intermediate values; reorder runs of filters by cost per drop."""
        by_op = {id(ops[p.index]): p for p in probes or [] if p.error is None}
        if reorder and by_op:
            ops = self.hoist_filters(ops, by_op)
        out: list[OP] = []
        run: list[Filter] = []

        def flush():
            if run:
                out.extend(self._optimize_filter_run(run, by_op, reorder and bool(by_op)))
                run.clear()

        for op in ops:
            if isinstance(op, Filter) and op.commutable:
                run.append(op)
            else:
                flush()
                out.append(op)
        flush()
        return out

    def hoist_filters(self, ops: list[OP], by_op: dict) -> list[OP]:
        """Move each selective filter of known input fields ahead of the mappers (and filters) just
        before it that write none of those fields."""
        out = list(ops)
        for op in list(out):
            probe = by_op.get(id(op))
            if not (isinstance(op, Filter) and op.commutable and probe is not None and probe.selectivity < 1.0):
                continue
            reads = op.fields_read()
            if reads is None or Fields.stats in reads or Fields.context in reads:
                continue
            i = out.index(op)
            j, passed = i, []
            while j > 0:
                prev = out[j - 1]
                if isinstance(prev, Mapper):
                    written = prev.fields_written()
                    if written is None or written & reads:
                        break
                    passed.append(prev)
                elif not (isinstance(prev, Filter) and prev.commutable):
                    break
                j -= 1
            if passed:
                while not isinstance(out[j], Mapper):  # go no further up than the first mapper passed
                    j += 1
                out.insert(j, out.pop(i))
                logger.info(f"{op.name} moved ahead of {', '.join(m.name for m in reversed(passed))} "
                            f"(it reads {', '.join(sorted(reads)) or 'no field'}, which they do not write; "
                            f"it keeps {probe.selectivity:.0%} of the probe)")
        return out

    def _optimize_filter_run(self, run: list[Filter], by_op: dict, reorder: bool) -> list[Filter]:
        groups: dict[str, list[Filter]] = {}
        units: list[list[Filter]] = []
        for f in run:  # group by the first intermediate value a filter uses, in recipe order
            if f.uses:
                key = f.uses[0]
                if key not in groups:
                    groups[key] = []
                    units.append(groups[key])
                groups[key].append(f)
            else:
                units.append([f])
        fused: list[Filter] = []
        for unit in units:
            if len(unit) > 1:
                op = FusedFilter(unit)
                logger.info(f"Ops are fused into one op {op.name}.")
                fused.append(op)
            else:
                fused.append(unit[0])
        if not reorder or any(self._members(u)[0] not in by_op for u in fused):
            return fused

        def rank(op: Filter) -> float:
            members = [by_op[m] for m in self._members(op) if m in by_op]
            cost = sum(p.seconds_per_sample for p in members)
            keep = 1.0
            for p in members:
                keep *= p.selectivity  # members decide independently enough for ordering purposes
            return cost / max(1.0 - keep, 1e-6)

        ordered = sorted(fused, key=rank)
        if ordered != fused:
            logger.info("filters reordered by probed cost per dropped sample: "
                        + " -> ".join(op.name for op in ordered))
        return ordered

    @staticmethod
    def _members(op: OP) -> list[int]:
        return [id(f) for f in op.filters] if isinstance(op, FusedFilter) else [id(op)]

    # -- sizing ----------------------------------------------------------------------------
    def batch_size_for(self, stage_ops: list[OP], probes: list[OpProbe], default: int) -> int:
        """The stage's batch size: the recipe's (``default``) unless the probe shows it is too small or
        too large for the work. Raised when a batch of ``default`` rows is under ``min_batch_seconds``
        of work (the per-batch cost of the pass would weigh), to about that much; lowered when it is over
        ``target_seconds`` (uneven ends, a slow progress bar) or over ``batch_memory_mb`` of peak memory.
        In between the recipe's size stays: a larger batch of row-wise work gains nothing and costs
        memory (a 12k-row text batch made the 18-op recipe 5-10% slower than 1,000 rows, in page faults
        and in an uneven split of 50k rows over 2 workers)."""
        ids = {id(op) for op in stage_ops}
        for op in stage_ops:
            if isinstance(op, FusedFilter):
                ids.update(id(f) for f in op.filters)
        sel = [p for p in probes if p.error is None and self._op_at.get(p.index) in ids]
        if not sel:
            return default
        per_sample = sum(p.seconds_per_sample for p in sel)
        mem = max(p.peak_bytes_per_sample for p in sel)
        size = default
        if per_sample > 0:
            if default * per_sample < self.min_batch_seconds:
                size = math.ceil(self.min_batch_seconds / per_sample)
            elif default * per_sample > self.target_seconds:
                size = int(self.target_seconds / per_sample)
        if mem > 0:
            size = min(size, int(self.batch_memory_mb * 2**20 / mem))
        return int(max(16, min(size, 20000)))

    def num_proc_for(self, np_: int, batch_size: int, probes: list[OpProbe]) -> int:
        """Cap the worker count so each worker's batches fit in the free memory."""
        try:
            import psutil

            free = psutil.virtual_memory().available
        except Exception:  # pragma: no cover - psutil is a core dependency
            return np_
        mem = max((p.peak_bytes_per_sample for p in probes if p.error is None), default=0.0)
        per_worker = 300 * 2**20 + 3 * batch_size * mem  # interpreter + loaded ops, and a few batches in flight
        return max(1, min(np_, int(0.8 * free // per_worker) or 1))
