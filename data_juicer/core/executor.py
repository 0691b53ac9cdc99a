"""The executor: one run of a recipe, load -> plan/adapt -> stages -> export -> summary, over a backend.

Plan: consecutive row-wise ops (mappers, filters, a deduplicator's hashing) form one pass (one
``FusedRun`` applied to each batch); dataset-level ops (dedup, selectors, groupers) are barriers
between passes. On the HF backend, consecutive deduplicators that only drop rows hash in one pass
(``plan_stages(merge_hashing=True)``): the row pass before them ends with all their hashings.
Where the data lives (Hugging Face ``datasets`` or Ray Data) is the backend's business
(``core/backends``); the stage loop, the adapter, checkpoints, the tracer, the job folder and the
error ledger are the same for both.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Optional

from loguru import logger

from data_juicer.core.checkpoint import Checkpointer
from data_juicer.core.counters import StageCounters
from data_juicer.core.job import Job, OpReport, RunReport
from data_juicer.core.runner import FusedRun
from data_juicer.ops.base import OP, Deduplicator
from data_juicer.ops.build import build_ops
from data_juicer.utils.errors import ConfigError

__all__ = ["Executor", "DefaultExecutor", "Stage", "plan_stages", "OpReport", "RunReport", "ConfigError"]


@dataclass
class Stage:
    ops: list[OP]  # a run of row-wise ops, or one dataset-level op
    row_wise: bool
    dedup: Optional[Deduplicator] = None  # row-wise run that ends with this dedup's hashing
    # with merged hashing, every dedup whose hashing ends this run (``dedup`` is the first of them);
    # their dataset-level stages follow this one, in this order
    dedups: tuple = ()

    def __post_init__(self):
        if self.dedup is not None and not self.dedups:
            self.dedups = (self.dedup,)

    @property
    def label(self) -> str:
        return " + ".join(op.name for op in self.ops)

    @property
    def recipe_ops(self) -> int:
        """Recipe entries this stage completes (a hashing pass completes none: its dedups do)."""
        if not self.row_wise:
            return 1
        return sum(op.recipe_ops for op in self.ops if not any(op is d for d in self.dedups))


# deduplicators whose ``process`` only drops rows (never changes the ones it keeps), so the hashes of
# the dedups right after them can be computed before they run, on rows that they may still drop
ROW_DROPPING_DEDUPS = frozenset({"document_deduplicator", "document_minhash_deduplicator",
                                 "document_simhash_deduplicator"})


def _only_drops_rows(op: OP) -> bool:
    return getattr(op, "name", None) in ROW_DROPPING_DEDUPS


def _shares_hash_column(op: OP, group: list[OP]) -> bool:
    """Two dedups of one kind (or one a subclass of the other) write the same hash column, and a
    hashing finds it already there: merged, the second would reuse the first one's hashes, made with
    the first one's parameters. Such a dedup starts a new group."""
    return any(isinstance(op, type(d)) or isinstance(d, type(op)) for d in group)


def plan_stages(ops: list[OP], merge_hashing: bool = False) -> list[Stage]:
    """Stages of ``ops``. With ``merge_hashing``, a run of consecutive deduplicators is hashed in one
    pass (the row-wise run before them, if any, ends with all their hashings), then deduplicated one
    after the other: a dedup that only drops rows (``ROW_DROPPING_DEDUPS``) leaves the other rows as
    they were, so the next one's hashes of its survivors are the same whether computed before or after
    it. The later dedups then hash a few rows that an earlier one drops, and one pass over the data
    (read, convert, write) is saved per merged dedup."""
    stages: list[Stage] = []
    run: list[OP] = []
    i = 0
    while i < len(ops):
        op = ops[i]
        i += 1
        if isinstance(op, Deduplicator):
            group = [op]
            while (merge_hashing and i < len(ops) and isinstance(ops[i], Deduplicator)
                   and _only_drops_rows(group[-1]) and not _shares_hash_column(ops[i], group)):
                group.append(ops[i])
                i += 1
            stages.append(Stage(run + group, row_wise=True, dedup=op, dedups=tuple(group)))
            stages.extend(Stage([d], row_wise=False) for d in group)
            run = []
        elif op.is_row_wise:
            run.append(op)
        else:
            if run:
                stages.append(Stage(run, row_wise=True))
                run = []
            stages.append(Stage([op], row_wise=False))
    if run:
        stages.append(Stage(run, row_wise=True))
    return stages


class Executor:
    """Runs a recipe on the backend its ``executor_type`` names (or the one given)."""

    # recipe keys accepted for compatibility whose feature is not built yet
    _NOT_YET = ("open_monitor", "open_insight_mining", "decrypt_after_reading", "encrypt_before_export")

    def __init__(self, recipe, backend: Optional[type] = None):
        from data_juicer.core.backends import backend_class

        self.recipe = recipe
        self.cfg = recipe.cfg
        self.job = Job(recipe)
        self.job_dir = self.job.dir
        self.ledger = self.job.ledger
        self.backend = (backend or backend_class(recipe.executor_type))(recipe, self.job)
        self.tracer = None
        self.adapter, self.probes, self.stats_order = None, [], None

    # -- the run ---------------------------------------------------------------------------
    def run(self):
        try:
            self.backend.start()
            return self._run()
        finally:
            self.backend.stop()
            self.job.close()

    def _run(self) -> RunReport:
        t0 = time.time()
        self._warn_unsupported()
        self.tracer = self._make_tracer()
        ops = self.build_ops()
        ckpt = self._checkpointer()
        ds, skip = self._start(ckpt, len(ops))
        rows_in = self.backend.num_rows(ds)
        where = "" if self.backend.name == "default" else f" on Ray ({self.backend.workers} CPUs)"
        logger.info(f"{rows_in} samples{where}; job folder {self.job_dir}")
        ops = self._adapt(ops, ds, skip)
        reports = {id(op): OpReport(op.name) for op in ops}
        ds = self._execute(self.plan(ops), ds, reports, ckpt, skip)
        report = self._export(ds)
        self.backend.after_stage(ds, None)
        if self.tracer is not None:
            self.tracer.finish()
        run_report = RunReport(self.job_dir, report.files, report.stats_file, rows_in, report.rows,
                               self.ledger.total, time.time() - t0, [reports[id(op)] for op in ops])
        self.job.write_summary(run_report)
        return run_report

    def build_ops(self) -> list[OP]:
        ops = build_ops(self.recipe.ops, {"work_dir": self.job_dir}, where=str(self.recipe.config_path))
        for op in ops:
            op.use_cache = bool(self.recipe.get("use_cache"))
            op.checkpoint_dir = self.recipe.checkpoint_dir if self.recipe.use_checkpoint else None
        return ops

    def plan(self, ops: list[OP]) -> list[Stage]:
        return plan_stages(ops, merge_hashing=self._merge_hashing())

    def _merge_hashing(self) -> bool:
        """Hash consecutive deduplicators in one pass (``plan_stages``): where the backend keeps the
        hashes of the later ones through the earlier ones' row selection, and not with checkpoints
        (a checkpoint between two merged dedups would have to hold the later ones' hashes)."""
        return bool(getattr(self.backend, "merges_hashing", False)) and not self.recipe.use_checkpoint

    def _start(self, ckpt, n_ops: int):
        """(dataset, number of recipe ops already applied): from a checkpoint, or loaded."""
        resumed = ckpt.resume() if ckpt else None
        if resumed:
            skip, ds = resumed
            logger.info(f"resuming from the checkpoint in {ckpt.folder}: {skip} of {n_ops} ops already applied")
            return ds, skip
        return self.backend.load(), 0

    def _execute(self, stages: list[Stage], ds, reports: dict, ckpt=None, skip: int = 0):
        every = self._checkpoint_every()
        done, last_saved = 0, skip
        i = 0
        while i < len(stages):
            stage = stages[i]
            n_new = stage.recipe_ops
            # a hashing pass belongs to its dedup: skip it only when that dedup is done too
            if done + n_new + (len(stage.dedups) if stage.row_wise else 0) <= skip:
                done += n_new
                i += 1
                continue
            before = ds
            nxt = stages[i + 1] if i + 1 < len(stages) else None
            if self._streams_into(stage, nxt):
                ds = self._run_streamed(stage, nxt, ds, reports)
                n_new += nxt.recipe_ops
                last, i = nxt, i + 2
            else:
                ds = self._run_stage(stage, ds, reports)
                last, i = stage, i + 1
            self.backend.after_stage(before, ds)
            done += n_new
            # not after a pass ending in a dedup's hashing: resuming there would re-run that pass's ops on
            # data that already went through them; the dedup right after saves instead
            if ckpt and done - last_saved >= every and not (last.row_wise and last.dedup is not None):
                t = time.time()
                ds = ckpt.save(ds, done)
                logger.info(f"checkpoint saved after {done} ops ({time.time() - t:.2f}s)")
                last_saved = done
        return ds

    def _streams_into(self, stage: Stage, nxt: Optional[Stage]) -> bool:
        """A streaming dataset-level op (``lineage_stage``) hands its finished rows straight to the
        row-wise pass after it, where the backend can (``Backend.run_streamed``)."""
        if stage.row_wise or nxt is None or not nxt.row_wise or not self.backend.can_stream:
            return False
        op = stage.ops[0]
        return bool(getattr(op, "stream", False)) and callable(getattr(op, "iter_bursts", None))

    def _run_streamed(self, stage: Stage, nxt: Stage, ds, reports: dict):
        t = time.time()
        op = stage.ops[0]
        rep = reports[id(op)]
        rep.rows_in = n_before = self.backend.num_rows(ds)
        counters, run, batch_size, _ = self._row_run(nxt)
        ds, rep.rows_out = self.backend.run_streamed(op, ds, nxt, run, batch_size)
        rep.seconds += time.time() - t
        self._collect_counters(nxt, counters, reports)
        logger.info(f"[{stage.label} -> {nxt.label[:80]} (streamed)] {n_before} -> {self.backend.num_rows(ds)} "
                    f"samples in {time.time() - t:.2f}s")
        from data_juicer.models.loader import release_models

        for o in stage.ops + nxt.ops:
            release_models(o.name)
        return ds

    # -- stages ----------------------------------------------------------------------------
    def _run_stage(self, stage: Stage, ds, reports: dict):
        t = time.time()
        n_before = self.backend.num_rows(ds)
        if stage.row_wise:
            ds = self._run_row_stage(stage, ds, reports)
        else:
            op = stage.ops[0]
            rep = reports[id(op)]
            rep.rows_in = n_before
            tracer = self.tracer
            show = self.recipe.trace_num if tracer is not None and isinstance(op, Deduplicator) else 0
            ds, pairs = self.backend.run_global(op, ds, show_num=show)
            if tracer is not None and isinstance(op, Deduplicator):
                tracer.duplicates(op.name, pairs)
            rep.rows_out = self.backend.num_rows(ds)
            rep.seconds += time.time() - t
        logger.info(f"[{stage.label}] {n_before} -> {self.backend.num_rows(ds)} samples in {time.time() - t:.2f}s")
        from data_juicer.models.loader import release_models

        for op in stage.ops:  # models an op loaded in this process are not needed any more
            release_models(op.name)
        return ds

    def _row_run(self, stage: Stage):
        """(counters, FusedRun, batch size, worker processes) of a row-wise stage."""
        counters = StageCounters(self.job.counters_root, [op.name for op in stage.ops])
        run = FusedRun(stage.ops, id_keys=self.recipe.id_keys, mark_errors=self.recipe.skip_op_error,
                       counter_path=counters.path, tracer=self.tracer, stats_order=self.stats_order)
        batch_size = min(op.batch_size for op in stage.ops)
        np_ = min([self.backend.workers] + [op.num_proc for op in stage.ops if op.num_proc and op.num_proc > 0])
        if self.adapter is not None and self.recipe.adaptive_batch_size and self.probes:
            batch_size = self.adapter.batch_size_for(stage.ops, self.probes, batch_size)
            np_ = self.adapter.num_proc_for(np_, batch_size, self.probes)
            logger.info(f"[{stage.label[:80]}] adaptive batch size {batch_size}, {np_} worker(s)")
        return counters, run, batch_size, np_

    def _collect_counters(self, stage: Stage, counters, reports: dict) -> None:
        per_op = counters.collect()
        if not per_op or not any(c[0] for c in per_op):
            logger.info(f"[{stage.label[:80]}] no batch ran here (reused from the cache, or no rows)")
        for op, (rin, rout, errs, secs) in zip(stage.ops, per_op or [(0, 0, 0, 0.0)] * len(stage.ops)):
            rep = reports[id(op)]
            rep.rows_in, rep.rows_out, rep.errors, rep.seconds = rin, rout, errs, secs

    def _run_row_stage(self, stage: Stage, ds, reports: dict):
        counters, run, batch_size, np_ = self._row_run(stage)
        out = self.backend.run_pass(stage, ds, run, batch_size, np_, self._hash_only_columns(stage, ds))
        self._collect_counters(stage, counters, reports)
        return out

    def _hash_only_columns(self, stage: Stage, ds) -> Optional[list]:
        """The columns a pass reads when it is only a deduplicator's hashing of known inputs
        (the backend then keeps or drops the hashes without rewriting every column)."""
        dedups = list(stage.dedups)
        if (not dedups or len(stage.ops) != len(dedups) or any(a is not b for a, b in zip(stage.ops, dedups))
                or self.recipe.keep_hashes_in_res_ds or self.tracer is not None):
            return None
        cols: list = []
        for op in dedups:
            inputs = op.hash_inputs()
            if not inputs:
                return None
            cols.extend(c for c in inputs if c not in cols)
        if self.backend.num_rows(ds) == 0:
            return None
        names = ds.column_names
        return cols if all(c in names for c in cols) else None

    # -- plan: the adapter -----------------------------------------------------------------
    def _adapt(self, ops: list[OP], ds, skip: int) -> list[OP]:
        """Probe, fuse, reorder and size (``op_fusion``, ``fusion_strategy``, ``adaptive_batch_size``)."""
        r = self.recipe
        if not (r.op_fusion or r.adaptive_batch_size) or skip:
            return ops
        from data_juicer.core.adapter import Adapter

        # the memory probe (tracemalloc) only matters for sizing batches
        self.adapter = Adapter(self.cfg, self.job_dir, memory_probe_samples=100 if r.adaptive_batch_size else 0)
        want_probe = r.adaptive_batch_size or (r.op_fusion and r.fusion_strategy == "probe")
        if want_probe and self.backend.num_rows(ds):
            batch = self.backend.head(ds, self.adapter.probe_samples)
            self.probes = self.adapter.probe_small_batch(batch, ops)
        if not r.op_fusion:
            return ops
        # filter traces name the filter that dropped a sample: keep the recipe order when tracing
        reorder = r.fusion_strategy == "probe" and self.tracer is None
        optimized = self.adapter.optimize(ops, self.probes, reorder=reorder)
        # with filters reordered, put the stat keys back in the order the recipe would give them
        order = [k for p in sorted(self.probes, key=lambda p: p.index) for k in p.stats_keys]
        self.stats_order = order or None
        return optimized

    # -- parts -----------------------------------------------------------------------------
    def _warn_unsupported(self) -> None:
        unused = [k for k in self._NOT_YET + self.backend.no_effect if self.recipe.get(k)]  # a list of keys: by name
        if unused:
            logger.warning(f"these recipe settings have no effect yet in this version"
                           f"{'' if self.backend.name == 'default' else ' on ' + self.backend.name}: "
                           f"{', '.join(unused)}")

    def _make_tracer(self):
        if not self.recipe.open_tracer:
            return None
        from data_juicer.core.tracer import TraceCollector

        return TraceCollector(os.path.join(self.job_dir, "trace"), list(self.recipe.op_list_to_trace),
                              self.recipe.trace_num, list(self.recipe.trace_keys))

    def _checkpointer(self) -> Optional[Checkpointer]:
        if not self.recipe.use_checkpoint:
            return None
        from data_juicer.core.checkpoint import input_signature

        folder = os.path.join(self.recipe.checkpoint_dir, self.backend.checkpoint_subdir)
        return Checkpointer(folder, self.recipe.process, input_signature(self.recipe), self.backend)

    def _checkpoint_every(self) -> int:
        c = self.recipe.checkpoint or {}
        if c.get("strategy") == "every_n_ops":
            return max(1, int(c.get("n_ops", 1)))
        return 1

    def _export(self, ds):
        from data_juicer.core.exporter import Exporter

        t = time.time()
        r = self.recipe
        exporter = Exporter(r.export_path, export_type=r.export_type,
                            export_shard_size=r.export_shard_size,
                            keep_stats_in_res_ds=r.keep_stats_in_res_ds,
                            keep_hashes_in_res_ds=r.keep_hashes_in_res_ds,
                            num_proc=self.backend.workers if r.export_in_parallel else 1,
                            # the default backend's np processes write a JSONL result together (same
                            # bytes; not on Ray, whose driver is not forked)
                            write_procs=self.backend.workers if self.backend.name == "default" else 1)
        report = self.backend.export(ds, exporter)
        logger.info(f"exported {report.rows} samples in {time.time() - t:.2f}s")
        return report


class DefaultExecutor(Executor):
    """``executor_type: default``: Hugging Face ``datasets`` with ``np`` worker processes."""

    def __init__(self, recipe):
        from data_juicer.core.backends.hf import HFBackend

        super().__init__(recipe, HFBackend)
        self.np = self.backend.np


def make_executor(recipe) -> Executor:
    return Executor(recipe)
