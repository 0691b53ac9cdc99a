"""The default executor: a recipe on Hugging Face ``datasets``, one pass per run of row-wise ops.

Plan: consecutive row-wise ops (mappers, filters, a deduplicator's hashing) form one
``FusedRun`` executed by a single ``Dataset.map`` over ``np`` processes; dataset-level ops
(dedup, selectors, groupers) are barriers between runs. Samples an op fails on leave the pass
marked, and go to the job's error ledger here.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Optional

from loguru import logger

from data_juicer.config.recipe import ConfigError, Recipe
from data_juicer.core.counters import StageCounters
from data_juicer.core.dataset import DJDataset
from data_juicer.core.ledger import ErrorLedger
from data_juicer.core.runner import FusedRun
from data_juicer.ops.base import OP, Deduplicator
from data_juicer.utils.constant import Fields


@dataclass
class Stage:
    ops: list[OP]  # a run of row-wise ops, or one dataset-level op
    row_wise: bool
    dedup: Optional[Deduplicator] = None  # row-wise run that ends with this dedup's hashing

    @property
    def label(self) -> str:
        return " + ".join(op.name for op in self.ops)


def plan_stages(ops: list[OP]) -> list[Stage]:
    stages: list[Stage] = []
    run: list[OP] = []
    for op in ops:
        if isinstance(op, Deduplicator):
            stages.append(Stage(run + [op], row_wise=True, dedup=op))
            stages.append(Stage([op], row_wise=False))
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


def _recipe_ops(op: OP) -> int:
    """How many recipe entries ``op`` stands for (a fused filter stands for its members)."""
    return getattr(op, "recipe_ops", 1)


@dataclass
class OpReport:
    name: str
    rows_in: int = 0
    rows_out: int = 0
    errors: int = 0
    seconds: float = 0.0


@dataclass
class RunReport:
    job_dir: str
    export_files: list[str]
    stats_file: Optional[str]
    rows_in: int
    rows_out: int
    errors: int
    seconds: float
    ops: list[OpReport] = field(default_factory=list)


def make_job_dir(cfg: dict) -> str:
    if not cfg.get("job_id"):
        cfg["job_id"] = f"{datetime.now(timezone.utc).strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}"
    work_dir = cfg.get("work_dir") or os.path.dirname(os.path.abspath(cfg["export_path"]))
    if "{job_id}" in work_dir:
        if not work_dir.rstrip("/").endswith("{job_id}"):
            raise ConfigError("work_dir: '{job_id}' must be the last part of the path")
        job_dir = work_dir.replace("{job_id}", cfg["job_id"])
    else:
        job_dir = os.path.join(work_dir, cfg["job_id"])
    os.makedirs(job_dir, exist_ok=True)
    return os.path.abspath(job_dir)


class DefaultExecutor:
    def __init__(self, recipe: Recipe):
        self.recipe = recipe
        self.cfg = recipe.cfg
        self.np = max(1, min(self.cfg["np"], os.cpu_count() or 1))
        self.job_dir = make_job_dir(self.cfg)
        self.ledger = ErrorLedger(os.path.join(self.job_dir, "errors.jsonl"), self.cfg.get("id_keys", ("id",)))
        self._log_sink = None
        self._setup_job_folder()

    # -- job folder ------------------------------------------------------------------------
    def _setup_job_folder(self) -> None:
        import yaml

        log_dir = self.cfg.get("event_log_dir") or os.path.join(self.job_dir, "logs")
        os.makedirs(log_dir, exist_ok=True)
        self._log_sink = logger.add(os.path.join(log_dir, "dj-process.log"), level="DEBUG", enqueue=False)
        if self.recipe.raw_yaml is not None:
            with open(os.path.join(self.job_dir, "recipe.yaml"), "w", encoding="utf-8") as f:
                f.write(self.recipe.raw_yaml)
        resolved = dict(self.cfg, process=self.recipe.process)
        with open(os.path.join(self.job_dir, "cli.yaml"), "w", encoding="utf-8") as f:
            f.write(f"# dj-process {' '.join(self.recipe.argv)}\n")
            yaml.safe_dump(json.loads(json.dumps(resolved, default=str)), f, sort_keys=False, allow_unicode=True)

    # -- run -------------------------------------------------------------------------------
    def run(self) -> RunReport:
        import datasets

        t0 = time.time()
        cfg = self.cfg
        if not cfg["use_cache"]:
            datasets.disable_caching()
        if cfg.get("cache_compress"):
            from data_juicer.core.cache import check_method

            check_method(cfg["cache_compress"])
        self._warn_unsupported()
        self.tracer = self._make_tracer()
        ops = self._build_ops()
        ckpt, skip = self._checkpointer(), 0
        resumed = ckpt.resume() if ckpt else None
        if resumed:
            skip, ds = resumed
            rows_in = ds.num_rows
            logger.info(f"resuming from the checkpoint in {ckpt.folder}: {skip} of {len(ops)} ops already applied")
        else:
            ds = self._load()
            rows_in = ds.num_rows
        logger.info(f"{rows_in} samples; job folder {self.job_dir}")
        ops = self._adapt(ops, ds, skip)
        reports = {id(op): OpReport(op.name) for op in ops}
        done = 0
        for stage in plan_stages(ops):
            n_new = sum(_recipe_ops(op) for op in stage.ops if op is not stage.dedup) if stage.row_wise else 1
            # a hashing pass belongs to its dedup: skip it only when that dedup is done too
            if done + n_new + (1 if stage.row_wise and stage.dedup else 0) <= skip:
                done += n_new
                continue
            before = ds
            ds = self._run_stage(stage, ds, reports)
            self._compress_unused(before, ds)
            done += n_new
            # not after a pass ending in a dedup's hashing: resuming there would re-run that pass's ops on
            # data that already went through them; the dedup right after saves instead
            if ckpt and not (stage.row_wise and stage.dedup is not None):
                ds = self._save_checkpoint(ckpt, ds, done)
        report = self._export(ds)
        self._compress_unused(ds, None)
        if self.tracer is not None:
            self.tracer.finish()
        took = time.time() - t0
        run_report = RunReport(self.job_dir, report.files, report.stats_file, rows_in, report.rows,
                               self.ledger.total, took, [reports[id(op)] for op in ops])
        self._write_summary(run_report)
        shutil.rmtree(os.path.join(self.job_dir, ".counters"), ignore_errors=True)
        if self._log_sink is not None:
            logger.remove(self._log_sink)
        return run_report

    # recipe keys accepted for compatibility whose feature is not built yet in this executor
    _NOT_YET = ("open_monitor", "open_insight_mining", "decrypt_after_reading", "encrypt_before_export")

    def _adapt(self, ops: list[OP], ds, skip: int) -> list[OP]:
        """Probe, fuse, reorder and size (``op_fusion``, ``fusion_strategy``, ``adaptive_batch_size``)."""
        cfg = self.cfg
        self.adapter, self.probes, self.stats_order = None, [], None
        if not (cfg["op_fusion"] or cfg["adaptive_batch_size"]) or skip:
            return ops
        from data_juicer.core.adapter import Adapter

        # the memory probe (tracemalloc) only matters for sizing batches
        self.adapter = Adapter(cfg, self.job_dir, memory_probe_samples=100 if cfg["adaptive_batch_size"] else 0)
        want_probe = cfg["adaptive_batch_size"] or (cfg["op_fusion"] and cfg["fusion_strategy"] == "probe")
        if want_probe and ds.num_rows:
            self.probes = self.adapter.probe_small_batch(ds, ops)
        if not cfg["op_fusion"]:
            return ops
        # filter traces name the filter that dropped a sample: keep the recipe order when tracing
        reorder = cfg["fusion_strategy"] == "probe" and self.tracer is None
        optimized = self.adapter.optimize(ops, self.probes, reorder=reorder)
        # with filters reordered, put the stat keys back in the order the recipe would give them
        order = [k for p in sorted(self.probes, key=lambda p: p.index) for k in p.stats_keys]
        self.stats_order = order or None
        return optimized

    def _warn_unsupported(self) -> None:
        unused = [k for k in self._NOT_YET if self.cfg.get(k)]
        if unused:
            logger.warning(f"these recipe settings have no effect yet in this version: {', '.join(unused)}")

    def _make_tracer(self):
        if not self.cfg["open_tracer"]:
            return None
        from data_juicer.core.tracer import TraceCollector

        return TraceCollector(os.path.join(self.job_dir, "trace"), self.cfg["op_list_to_trace"],
                              self.cfg["trace_num"], self.cfg["trace_keys"])

    def _checkpointer(self):
        if not self.cfg["use_checkpoint"]:
            return None
        from data_juicer.core.checkpoint import Checkpointer, input_signature

        base = self.cfg.get("work_dir") or os.path.dirname(os.path.abspath(self.cfg["export_path"]))
        base = base.replace("{job_id}", "")
        folder = self.cfg.get("checkpoint_dir") or os.path.join(base, "ckpt")
        return Checkpointer(folder, self.recipe.process, input_signature(self.cfg))

    def _save_checkpoint(self, ckpt, ds, done: int):
        if ds._indices is not None:
            ds = ds.flatten_indices()
        ckpt.save(ds, done)
        logger.info(f"checkpoint saved after {done} ops")
        return ds

    def _build_ops(self) -> list[OP]:
        ops = []
        for spec in self.recipe.ops:
            params = dict(spec.params)
            params.setdefault("work_dir", self.job_dir)
            if params.get("work_dir") is None:
                params["work_dir"] = self.job_dir
            try:
                op = spec.cls(**params)
                op._recipe_params = params  # what the pass fingerprint of use_cache is made of
                ops.append(op)
            except ImportError as e:
                raise ConfigError(f"{self.recipe.config_path}: {e}") from e
            except (ValueError, TypeError) as e:
                raise ConfigError(f"{self.recipe.config_path}: operator '{spec.name}': {e}") from e
        return ops

    def _load(self):
        from data_juicer.core.loader import Loader, parse_dataset_path, specs_from_dataset_config

        import datasets

        cfg = self.cfg
        if not sys.stderr.isatty():  # plain log lines instead of progress bars
            datasets.disable_progress_bars()
        if cfg.get("dataset"):
            dcfg = cfg["dataset"] if isinstance(cfg["dataset"], dict) else {"configs": cfg["dataset"]}
            specs, max_n = specs_from_dataset_config(dcfg)
        else:
            specs, max_n = parse_dataset_path(cfg["dataset_path"]), None
        loader = Loader(text_keys=cfg["text_keys"], media_keys=(cfg["image_key"], cfg["audio_key"], cfg["video_key"]),
                        suffixes=cfg["suffixes"], add_suffix=cfg.get("add_suffix", False), num_proc=self.np,
                        cache_dir=cfg.get("ds_cache_dir"), lenient=cfg["load_jsonl_lenient"],
                        tmp_dir=os.path.join(self.job_dir, "tmp"), load_kwargs=cfg.get("load_dataset_kwargs"))
        result = loader.load(specs, max_n)
        if result.rejected:
            n = self.ledger.record(result.rejected)
            logger.warning(f"{n} input rows could not be loaded; see {self.ledger.path}")
        ds = result.dataset
        if cfg["skip_op_error"] and Fields.row_index not in ds.column_names:
            ds = ds.add_column(Fields.row_index, list(range(ds.num_rows)))
        return ds

    def _run_stage(self, stage: Stage, ds, reports: dict):
        t = time.time()
        n_before = ds.num_rows
        if stage.row_wise:
            ds = self._run_row_stage(stage, ds, reports)
        else:
            op = stage.ops[0]
            rep = reports[id(op)]
            rep.rows_in = ds.num_rows
            ds = self._run_global(op, ds)
            rep.rows_out = ds.num_rows
            rep.seconds += time.time() - t
        logger.info(f"[{stage.label}] {n_before} -> {ds.num_rows} samples in {time.time() - t:.2f}s")
        from data_juicer.models.loader import release_models

        for op in stage.ops:  # models an op loaded in this process are not needed any more
            release_models(op.name)
        return ds

    def _hash_only(self, stage: Stage, ds, reports: dict):
        """A pass that is only a deduplicator's hashing, whose inputs are known: read just those
        columns and keep the hashes beside the data for the dedup (no rewrite of every column).
        Returns None when this shortcut does not apply (then the normal pass runs)."""
        op = stage.dedup
        cols = op.hash_inputs() if stage.ops == [op] else None
        if not cols or self.cfg["keep_hashes_in_res_ds"] or getattr(self, "tracer", None) is not None \
                or any(c not in ds.column_names for c in cols) or ds.num_rows == 0:
            return None
        t = time.time()

        def hash_batch(samples):
            out = op.compute_hash(dict(samples))
            return {k: v for k, v in out.items() if k not in cols}

        num_proc = self.np if self.np > 1 and ds.num_rows > op.batch_size else None
        try:
            hashes = ds.select_columns(cols).map(hash_batch, batched=True, batch_size=op.batch_size,
                                                 num_proc=num_proc, remove_columns=cols, desc=f"{op.name} (hashing)")
        except Exception as e:  # a sample it fails on: the normal pass isolates it into the ledger
            logger.info(f"[{op.name}] hashing shortcut not used ({type(e).__name__}: {e})")
            return None
        self._pending_extra = {c: hashes.data.column(c) for c in hashes.column_names}
        rep = reports[id(op)]
        rep.rows_in, rep.rows_out, rep.seconds = ds.num_rows, ds.num_rows, time.time() - t
        return ds

    def _run_row_stage(self, stage: Stage, ds, reports: dict):
        import pyarrow.compute as pc

        if stage.dedup is not None and getattr(stage.dedup, "hash_inputs", None) is not None:
            out = self._hash_only(stage, ds, reports)
            if out is not None:
                return out

        counters = StageCounters(os.path.join(self.job_dir, ".counters"), [op.name for op in stage.ops])
        run = FusedRun(stage.ops, id_keys=self.cfg.get("id_keys", ("id",)), mark_errors=self.cfg["skip_op_error"],
                       counter_path=counters.path, tracer=getattr(self, "tracer", None),
                       stats_order=getattr(self, "stats_order", None))
        batch_size = min(op.batch_size for op in stage.ops)
        np_ = min([self.np] + [op.num_proc for op in stage.ops if op.num_proc and op.num_proc > 0])
        adapter = getattr(self, "adapter", None)
        if adapter is not None and self.cfg["adaptive_batch_size"] and self.probes:
            batch_size = adapter.batch_size_for(stage.ops, self.probes, batch_size)
            np_ = adapter.num_proc_for(np_, batch_size, self.probes)
            logger.info(f"[{stage.label[:80]}] adaptive batch size {batch_size}, {np_} worker(s)")
        num_proc = np_ if np_ > 1 and ds.num_rows > batch_size else None
        map_kwargs = self._cache_kwargs(stage, ds)
        out = ds.map(run, batched=True, batch_size=batch_size, num_proc=num_proc, desc=stage.label[:80],
                     **map_kwargs)
        per_op = counters.collect()
        if map_kwargs and not per_op:
            logger.info(f"[{stage.label[:80]}] reused from the cache (fingerprint {map_kwargs['new_fingerprint']})")
        for op, (rin, rout, errs, secs) in zip(stage.ops, per_op or [(0, 0, 0, 0.0)] * len(stage.ops)):
            rep = reports[id(op)]
            rep.rows_in, rep.rows_out, rep.errors, rep.seconds = rin, rout, errs, secs
        if Fields.error in out.column_names:
            col = out.data.column(Fields.error)
            failed = pc.greater(pc.utf8_length(col), 0)
            n_failed = pc.sum(failed).as_py() or 0
            if n_failed:
                import numpy as np

                mask = failed.to_numpy(zero_copy_only=False)
                bad = out.select(np.flatnonzero(mask))
                self.ledger.record(
                    dict(json.loads(r[Fields.error]), sample=r) for r in bad)
                logger.warning(f"[{stage.label}] {n_failed} samples failed and went to {self.ledger.path}")
                out = out.select(np.flatnonzero(~mask))
            out = out.remove_columns([Fields.error])
        return out

    def _cache_kwargs(self, stage: Stage, ds) -> dict:
        """A stable fingerprint for the pass, so a rerun loads it from the datasets cache."""
        files = getattr(ds, "cache_files", None)
        if not self.cfg["use_cache"] or not files or getattr(self, "tracer", None) is not None:
            return {}
        from data_juicer.core.cache import restore, stage_fingerprint

        fp = stage_fingerprint(ds._fingerprint, stage.ops,
                               {"skip_op_error": self.cfg["skip_op_error"],
                                "stats_order": getattr(self, "stats_order", None)})
        restored = restore(os.path.dirname(files[0]["filename"]), fp, self.cfg.get("cache_compress"))
        if restored:
            logger.info(f"cache_compress: {restored} cache file(s) of [{stage.label[:60]}] decompressed for reuse")
        return {"new_fingerprint": fp, "load_from_cache_file": True}

    def _compress_unused(self, before, after) -> None:
        """``cache_compress``: compress the pass files of ``before`` that ``after`` does not read."""
        algo = self.cfg.get("cache_compress")
        if not algo or before is None or not self.cfg["use_cache"]:
            return
        from data_juicer.core.cache import compress, pass_files

        still_read = set(pass_files(after)) if after is not None else set()
        compress([f for f in pass_files(before) if f not in still_read], algo)

    def _run_global(self, op: OP, ds):
        op.error_ledger = self.ledger  # dataset-level ops that contain failures record them in the job's ledger
        wrapped = DJDataset(ds, getattr(self, "_pending_extra", None))
        self._pending_extra = None
        if isinstance(op, Deduplicator):
            tracer = getattr(self, "tracer", None)
            result, pairs = op.process(wrapped, show_num=self.cfg["trace_num"] if tracer else 0)
            if tracer is not None:
                tracer.duplicates(op.name, pairs)
        else:
            result = op.process(wrapped)
        return result.hf if isinstance(result, DJDataset) else result

    # -- export ----------------------------------------------------------------------------
    def _export(self, ds):
        from data_juicer.core.exporter import Exporter

        cfg = self.cfg
        t = time.time()
        indices = ds._indices.column(0).to_numpy() if ds._indices is not None else None
        exporter = Exporter(cfg["export_path"], export_type=cfg.get("export_type"),
                            export_shard_size=cfg["export_shard_size"],
                            keep_stats_in_res_ds=cfg["keep_stats_in_res_ds"],
                            keep_hashes_in_res_ds=cfg["keep_hashes_in_res_ds"],
                            num_proc=self.np if cfg["export_in_parallel"] else 1)
        report = exporter.export(ds.data.table, indices)
        logger.info(f"exported {report.rows} samples in {time.time() - t:.2f}s")
        return report

    def _write_summary(self, r: RunReport) -> None:
        summary = {
            "job_dir": r.job_dir, "export_files": r.export_files, "stats_file": r.stats_file,
            "rows_in": r.rows_in, "rows_out": r.rows_out, "errors": r.errors, "seconds": round(r.seconds, 3),
            "errors_by_op": dict(self.ledger.counts),
            "ops": [vars(o) for o in r.ops],
        }
        with open(os.path.join(self.job_dir, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2, ensure_ascii=False)
