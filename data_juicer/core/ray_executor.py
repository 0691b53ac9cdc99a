"""The Ray executor (``executor_type: ray``): the same recipe, the same output, on a Ray cluster.

It reuses the default executor's plan (``plan_stages``), job folder, error ledger, summary and
exporter, and runs each stage on Ray Data:

- a run of row-wise ops is one ``map_batches`` of the same ``FusedRun`` the default executor
  uses (plain tasks for CPU ops; an actor pool, built once per actor, when an op loads a model
  or asks for GPUs), so failing samples travel as the ``__dj__error__`` column and land in the
  same ``errors.jsonl``;
- a deduplicator runs its own ``run_ray(ds)`` when it has one; ``document_deduplicator`` runs
  on hash sets sharded over actors (keep-first, as locally); any other deduplicator or selector
  runs its usual ``process`` on the ``RayDataset`` facade (a column gathered to the driver,
  the selection applied block by block in the workers);
- groupers (and aggregators, which need them) are rejected when the recipe is validated,
  before any data is read.

Order: every sample carries a stable id (``__dj__index__``) and Ray Data runs with
``preserve_order``, so the output has the default executor's order and bytes.

Checkpoints (``use_checkpoint: true``): after each stage (or every ``checkpoint.n_ops`` ops)
the dataset is written as Parquet, one file per block, with the stable id; a rerun of the same
recipe on the same input resumes after the last saved op and says so.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sys
import time
import uuid
from typing import Optional

from loguru import logger

from data_juicer.config.recipe import ConfigError, Recipe
from data_juicer.core.checkpoint import STATE_FILE, Checkpointer
from data_juicer.core.counters import StageCounters
from data_juicer.core.executor import DefaultExecutor, OpReport, RunReport, plan_stages
from data_juicer.core.ray_dataset import ID, RayDataset, remote, to_table, unify
from data_juicer.core.runner import FusedRun, OpError
from data_juicer.ops.base import OP, Aggregator, Deduplicator, Grouper, Selector
from data_juicer.utils.constant import Fields, HashKeys

# formats Ray Data reads natively (anything else goes through the default loader, then to Ray)
_RAY_FORMATS = ("json", "parquet", "csv", "tsv")


# -- validation (before any data is read) ------------------------------------------------------
def ray_support(cls) -> Optional[str]:
    """None if ops of this class can run on Ray, else why not."""
    if issubclass(cls, Grouper):
        return ("a grouper builds one sample per group from the whole dataset in one process, "
                "which the Ray executor does not do")
    if issubclass(cls, Aggregator):
        return "an aggregator works on the grouped samples a grouper makes, and groupers do not run on Ray"
    if issubclass(cls, (Deduplicator, Selector)):
        return None  # run_ray, the sharded exact dedup, or process() on the RayDataset facade
    if "ray" not in getattr(cls, "exec_modes", ("default", "ray")):
        return f"it declares exec_modes={tuple(cls.exec_modes)}"
    return None


def validate_for_ray(recipe: Recipe) -> None:
    for i, spec in enumerate(recipe.ops):
        why = ray_support(spec.cls)
        if why:
            raise ConfigError(
                f"{recipe.config_path}: process[{i}]: operator '{spec.name}' ({spec.cls.op_type}) cannot run with "
                f"executor_type 'ray': {why}. Alternative: run this recipe with `executor_type: default`, or split "
                f"it in two: the ops before '{spec.name}' on Ray, then a default-executor recipe from '{spec.name}' on")


def needs_actor(op: OP) -> bool:
    """Ops that load a model or use GPUs run in an actor pool (built once per actor)."""
    return bool(getattr(op, "uses_model", False) or (op.num_gpus or 0) > 0 or op.accelerator == "cuda"
                or op.ray_execution_mode == "actor")


def _memory_bytes(value) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    s = str(value).strip().upper().replace("IB", "B")
    for unit, mult in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * mult
    return float(s)


# -- block-level steps (Ray tasks) -------------------------------------------------------------
def _split_errors(table):
    """(rows without a failure, the failed rows as ledger records) of one block."""
    import pyarrow.compute as pc

    if Fields.error not in table.column_names:
        return table, []
    col = table.column(Fields.error)
    failed = pc.fill_null(pc.greater(pc.utf8_length(col), 0), False)
    n_failed = pc.sum(failed).as_py() or 0
    records = []
    if n_failed:
        for r in table.filter(failed).to_pylist():
            records.append(dict(json.loads(r[Fields.error]), sample=r))
        table = table.filter(pc.invert(failed))
    return table.drop_columns([Fields.error]), records


def _shard_of(hashes: list, n: int) -> list[int]:
    return [int(h[:8], 16) % n if h else 0 for h in hashes]


def _offer_block(table, shards: list) -> int:
    import ray

    hashes = table.column(HashKeys.hash).to_pylist()
    ids = table.column(ID).to_pylist()
    n = len(shards)
    parts: dict[int, tuple[list, list]] = {}
    for h, i, s in zip(hashes, ids, _shard_of(hashes, n)):
        p = parts.setdefault(s, ([], []))
        p[0].append(h)
        p[1].append(i)
    ray.get([shards[s].offer.remote(hs, ix) for s, (hs, ix) in parts.items()])
    return table.num_rows


def _keep_first_block(table, shards: list):
    import numpy as np
    import pyarrow as pa
    import ray

    hashes = table.column(HashKeys.hash).to_pylist()
    ids = table.column(ID).to_pylist()
    n = len(shards)
    which = np.asarray(_shard_of(hashes, n), dtype=np.int64)
    keep = np.zeros(len(hashes), dtype=bool)
    pending = []
    for s in np.unique(which):
        rows = np.flatnonzero(which == s)
        pending.append((rows, shards[s].is_first.remote([hashes[i] for i in rows], [ids[i] for i in rows])))
    for rows, ref in pending:
        keep[rows] = ray.get(ref)
    return table if keep.all() else table.filter(pa.array(keep))


class _HashShard:
    """One shard of the exact-dedup hash set: the smallest stable id seen per hash."""

    def __init__(self):
        self.first: dict = {}

    def offer(self, hashes: list, ids: list) -> int:
        first = self.first
        for h, i in zip(hashes, ids):
            cur = first.get(h)
            if cur is None or i < cur:
                first[h] = i
        return len(hashes)

    def is_first(self, hashes: list, ids: list) -> list:
        first = self.first
        return [first[h] == i for h, i in zip(hashes, ids)]


_FATAL = re.compile(r"DJ-OP-ERROR\[([0-9a-f]+)\]")


def _run_fused(run: FusedRun, table):
    try:
        return to_table(run(table.to_pydict()))
    except OpError as e:  # Ray keeps only the text of a worker's exception: carry the details in it
        info = json.dumps({"op": e.op, "message": str(e)}, ensure_ascii=False).encode("utf-8").hex()
        raise RuntimeError(f"DJ-OP-ERROR[{info}]") from None


class _FusedBatchFn:
    """``FusedRun`` on an Arrow batch (tasks)."""

    def __init__(self, run: FusedRun):
        self.run = run

    def __call__(self, table):
        return _run_fused(self.run, table)


class _FusedActor:
    """``FusedRun`` in an actor: built once, so a model an op loads stays loaded between batches."""

    def __init__(self, run: FusedRun):
        self.run = run

    def __call__(self, table):
        return _run_fused(self.run, table)


def _op_error_from(exc: BaseException) -> Optional[OpError]:
    """The ``OpError`` a worker raised, rebuilt from the text Ray passes back."""
    m = _FATAL.search(str(exc))
    if not m:
        return None
    info = json.loads(bytes.fromhex(m.group(1)).decode("utf-8"))
    err = OpError.__new__(OpError)
    RuntimeError.__init__(err, info["message"])
    err.op, err.cause = info["op"], None
    return err


class RayCheckpointer(Checkpointer):
    """Op-level checkpoints as Parquet (one file per block, with the stable id), under ``<ckpt>/ray``."""

    def __init__(self, folder: str, process: list[dict], signature: list):
        super().__init__(os.path.join(folder, "ray"), process, signature)

    def resume(self):
        state_path = os.path.join(self.folder, STATE_FILE)
        if not (os.path.exists(state_path) and os.path.isdir(self.latest)):
            return None
        with open(state_path, encoding="utf-8") as f:
            state = json.load(f)
        done = state.get("ops", [])
        if state.get("input") != self.signature:
            logger.info("checkpoint found but the input changed: starting from the beginning")
            return None
        if done != self.process[: len(done)]:
            logger.info("checkpoint found but the recipe's ops differ from it: starting from the beginning")
            return None
        return len(done), RayDataset.read_parquet_folder(self.latest)

    def save(self, ds: RayDataset, n_ops_done: int) -> None:
        tmp = os.path.join(self.folder, f".tmp-{uuid.uuid4().hex[:8]}")
        ds.write_parquet_folder(tmp)
        old = None
        if os.path.exists(self.latest):
            old = os.path.join(self.folder, f".old-{uuid.uuid4().hex[:8]}")
            os.replace(self.latest, old)
        os.replace(tmp, self.latest)
        state_tmp = os.path.join(self.folder, f".{STATE_FILE}.tmp")
        with open(state_tmp, "w", encoding="utf-8") as f:
            json.dump({"ops": self.process[:n_ops_done], "input": self.signature, "backend": "ray"}, f)
        os.replace(state_tmp, os.path.join(self.folder, STATE_FILE))
        if old:
            shutil.rmtree(old, ignore_errors=True)


class RayExecutor(DefaultExecutor):
    # document_deduplicator on at least this many rows uses hash sets sharded over actors; below it,
    # gathering the 32-byte hash column to the driver is cheaper than starting the actors
    exact_dedup_actor_min_rows = 500_000
    # on top of the default executor's list: the adapter (probe, fusion, adaptive batches) and the
    # datasets cache work on Hugging Face datasets only
    _NOT_YET = tuple(dict.fromkeys(DefaultExecutor._NOT_YET + ("op_fusion", "adaptive_batch_size", "cache_compress")))

    def __init__(self, recipe: Recipe):
        validate_for_ray(recipe)  # before the job folder is made and before any data is read
        super().__init__(recipe)
        self._own_ray = False
        self._num_cpus = 1

    # -- Ray ------------------------------------------------------------------------------
    def _init_ray(self) -> None:
        import ray
        import ray.data

        if not ray.is_initialized():
            address = self.cfg.get("ray_address") or "auto"
            if address in ("auto", "local"):
                address = os.environ.get("RAY_ADDRESS") or None
            kwargs = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
            if address is None:
                logger.info("starting a local Ray instance")
                ray.init(address="local", **kwargs)  # "local": never join a cluster some other job started
            else:
                logger.info(f"connecting to the Ray cluster at {address}")
                ray.init(address=address, **kwargs)
            self._own_ray = True
        self._num_cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True
        ctx.enable_progress_bars = sys.stderr.isatty()
        for name in ("ray.data", "ray"):
            logging.getLogger(name).setLevel(logging.WARNING)
        self._ship_custom_ops()

    def _ship_custom_ops(self) -> None:
        """Op classes from outside the package (custom_operator_paths) travel by value to the workers."""
        from ray import cloudpickle

        for spec in self.recipe.ops:
            mod = spec.cls.__module__
            if not mod.startswith("data_juicer.") and mod in sys.modules:
                try:
                    cloudpickle.register_pickle_by_value(sys.modules[mod])
                except ValueError:
                    pass

    def _shutdown_ray(self) -> None:
        if self._own_ray:
            import ray

            ray.shutdown()
            self._own_ray = False

    # -- run ------------------------------------------------------------------------------
    def run(self) -> RunReport:
        try:
            return self._run()
        finally:
            self._shutdown_ray()
            if self._log_sink is not None:
                try:
                    logger.remove(self._log_sink)
                except ValueError:
                    pass
                self._log_sink = None

    def _run(self) -> RunReport:
        t0 = time.time()
        self._warn_unsupported()
        self._init_ray()
        self.tracer = self._make_tracer()
        ops = self._build_ops()
        reports = {id(op): OpReport(op.name) for op in ops}
        ckpt, skip = self._checkpointer(), 0
        resumed = ckpt.resume() if ckpt else None
        if resumed:
            skip, ds = resumed
            rows_in = ds.num_rows
            logger.info(f"resuming from the checkpoint in {ckpt.folder}: {skip} of {len(ops)} ops already applied")
        else:
            ds = self._load()
            rows_in = ds.num_rows
        logger.info(f"{rows_in} samples on Ray ({self._num_cpus} CPUs); job folder {self.job_dir}")
        every = self._checkpoint_every()
        done, last_saved = 0, skip
        for stage in plan_stages(ops):
            n_new = len([op for op in stage.ops if op is not stage.dedup]) if stage.row_wise else 1
            if done + n_new + (1 if stage.row_wise and stage.dedup else 0) <= skip:
                done += n_new
                continue
            ds = self._run_stage(stage, ds, reports)
            done += n_new
            if ckpt and done - last_saved >= every and not (stage.row_wise and stage.dedup):
                self._save_checkpoint(ckpt, ds, done)
                last_saved = done
        report = self._export(ds)
        if self.tracer is not None:
            self.tracer.finish()
        took = time.time() - t0
        run_report = RunReport(self.job_dir, report.files, report.stats_file, rows_in, report.rows,
                               self.ledger.total, took, [reports[id(op)] for op in ops])
        self._write_summary(run_report)
        shutil.rmtree(os.path.join(self.job_dir, ".counters"), ignore_errors=True)
        return run_report

    def _checkpoint_every(self) -> int:
        c = self.cfg.get("checkpoint") or {}
        if c.get("strategy") == "every_n_ops":
            return max(1, int(c.get("n_ops", 1)))
        return 1

    def _checkpointer(self):
        if not self.cfg["use_checkpoint"]:
            return None
        from data_juicer.core.checkpoint import input_signature

        base = self.cfg.get("work_dir") or os.path.dirname(os.path.abspath(self.cfg["export_path"]))
        base = base.replace("{job_id}", "")
        folder = self.cfg.get("checkpoint_dir") or os.path.join(base, "ckpt")
        return RayCheckpointer(folder, self.recipe.process, input_signature(self.cfg))

    def _save_checkpoint(self, ckpt, ds, done: int):
        t = time.time()
        ckpt.save(ds, done)
        logger.info(f"checkpoint saved after {done} ops ({time.time() - t:.2f}s)")
        return ds

    # -- load -----------------------------------------------------------------------------
    def _num_blocks(self, rows: int) -> int:
        n = self.cfg.get("override_num_blocks")
        if n:
            return max(1, int(n))
        return max(1, min(rows, max(4 * self._num_cpus, -(-rows // 20000))))

    def _load(self) -> RayDataset:
        from data_juicer.core.loader import DataLoadError, format_of, list_files, parse_dataset_path

        cfg = self.cfg
        native = None
        if not cfg.get("dataset") and not cfg["load_jsonl_lenient"] and not cfg.get("load_dataset_kwargs") \
                and not cfg.get("add_suffix"):
            specs = parse_dataset_path(cfg["dataset_path"])
            if len(specs) == 1:
                files = list_files(specs[0].path, cfg["suffixes"])
                fmts = {format_of(f) for f in files}
                if len(fmts) == 1 and fmts <= set(_RAY_FORMATS) and (
                        fmts != {"json"} or all(".jsonl" in os.path.basename(f).lower() for f in files)):
                    native = (specs[0].path, files, fmts.pop())
        if native is None:  # mixes, plain-text files, JSON arrays, lenient reads: the default loader, then Ray
            hf = super()._load()
            if hf._indices is not None:
                hf = hf.flatten_indices()
            table = hf.data.table
            if ID in table.column_names:
                table = table.drop_columns([ID])
            import numpy as np
            import pyarrow as pa

            table = table.append_column(ID, pa.array(np.arange(table.num_rows, dtype=np.int64)))
            return RayDataset.from_table(table, self._num_blocks(table.num_rows))
        path, files, fmt = native
        try:
            raw = self._read_native(files, fmt)
            return self._prepare(raw, path)
        except DataLoadError:
            raise
        except Exception as e:
            if fmt == "json":
                from data_juicer.core.loader import _first_bad_json_line

                for f in files:
                    bad = _first_bad_json_line(f)
                    if bad:
                        raise DataLoadError(
                            f"{f}, line {bad[0]}: not valid JSON ({bad[1]}). Fix the line, or set "
                            f"`load_jsonl_lenient: true` to skip bad lines (they go to the error ledger)") from e
            raise DataLoadError(f"could not read {fmt} data from {files[0]}"
                                f"{f' (+{len(files) - 1} more files)' if len(files) > 1 else ''} with Ray: "
                                f"{type(e).__name__}: {e}") from e

    def _read_native(self, files: list[str], fmt: str):
        import ray.data

        if fmt == "json":
            import pyarrow.json as paj

            opts = dict(self.cfg.get("read_options") or {})
            kwargs = {"read_options": paj.ReadOptions(**opts)} if opts else {}
            return ray.data.read_json(files, file_extensions=None, **kwargs)
        if fmt == "parquet":
            return ray.data.read_parquet(files, file_extensions=None)
        import pyarrow.csv as pacsv

        parse = pacsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",")
        return ray.data.read_csv(files, parse_options=parse, file_extensions=None)

    def _prepare(self, raw, path: str) -> RayDataset:
        """Stable ids in file order, media paths made absolute, null texts to the ledger; even blocks."""
        import ray

        from data_juicer.core.loader import DataLoadError
        from data_juicer.core.ray_dataset import _block_info, _null_text_rows, _prepare_slice

        cfg = self.cfg
        text_key = cfg["text_keys"][0] if isinstance(cfg["text_keys"], list) else cfg["text_keys"]
        refs = list(raw.materialize().to_arrow_refs())
        info = ray.get([remote(_block_info).remote(r, text_key) for r in refs])
        names = RayDataset.from_refs(refs, [n for n, _ in info]).column_names
        if text_key not in names:
            raise DataLoadError(
                f"'{path}' has no field '{text_key}' (its fields: {', '.join(n for n in names if n != ID)}); "
                f"set text_keys in the recipe to the field that holds the text")
        total = sum(n for n, _ in info)
        per = max(1, -(-total // self._num_blocks(total)))
        base = path if os.path.isdir(path) else os.path.dirname(path)
        media = tuple(k for k in (cfg["image_key"], cfg["audio_key"], cfg["video_key"]) if k in names)
        prep = remote(_prepare_slice, scheduling_strategy="SPREAD")  # blocks start out spread over the nodes
        out, first = [], 0
        rejected = []
        for ref, (n, nulls) in zip(refs, info):
            for start in range(0, n, per):
                length = min(per, n - start)
                out.append(prep.remote(ref, start, length, first + start, text_key, media, base))
            if nulls:
                rejected += ray.get(remote(_null_text_rows).remote(ref, text_key, first))
            first += n
        if rejected:
            self.ledger.record(rejected)
            logger.warning(f"{len(rejected)} input rows could not be loaded; see {self.ledger.path}")
        return RayDataset.from_refs(out)

    # -- stages ---------------------------------------------------------------------------
    def _hash_only_stage(self, stage, ds: RayDataset) -> bool:
        """A pass that is only a deduplicator's hashing: the default executor keeps those hashes beside
        the data and they are gone after the dedup; so drop them after the dedup here too."""
        op = stage.dedup
        hash_inputs = getattr(op, "hash_inputs", None) if op is not None else None
        if not callable(hash_inputs) or stage.ops != [op]:
            return False
        cols = hash_inputs()
        return bool(cols) and not self.cfg["keep_hashes_in_res_ds"] and getattr(self, "tracer", None) is None \
            and all(c in ds.column_names for c in cols) and ds.num_rows > 0

    def _run_row_stage(self, stage, ds: RayDataset, reports: dict) -> RayDataset:
        hash_only = self._hash_only_stage(stage, ds)
        before = set(ds.column_names) if hash_only else None
        out = self._run_row_pass(stage, ds, reports)
        self._drop_after_dedup = [c for c in out.column_names if c not in before] if hash_only else []
        return out

    def _run_row_pass(self, stage, ds: RayDataset, reports: dict) -> RayDataset:
        import ray

        counters = StageCounters(os.path.join(self.job_dir, ".counters"), [op.name for op in stage.ops])
        run = FusedRun(stage.ops, id_keys=self.cfg.get("id_keys", ("id",)), mark_errors=self.cfg["skip_op_error"],
                       counter_path=counters.path, tracer=getattr(self, "tracer", None))
        batch_size = min(op.batch_size for op in stage.ops)
        refs, _ = ds.blocks()
        src = RayDataset.from_refs(refs).ray
        res = {}
        cpus = [op.num_cpus for op in stage.ops if op.num_cpus]
        gpus = [op.num_gpus for op in stage.ops if op.num_gpus]
        mems = [_memory_bytes(op.memory) for op in stage.ops if op.memory]
        if cpus:
            res["num_cpus"] = max(cpus)
        if gpus:
            res["num_gpus"] = max(gpus)
        if mems:
            res["memory"] = max(mems)
        if res.get("num_gpus") and ray.cluster_resources().get("GPU", 0) < res["num_gpus"]:
            raise ConfigError(f"[{stage.label}] asks for num_gpus={res['num_gpus']} per worker, but the Ray cluster "
                              f"has {ray.cluster_resources().get('GPU', 0):g} GPUs; set num_gpus: 0 (and "
                              f"accelerator: cpu) or run on a cluster with GPUs")
        if any(needs_actor(op) for op in stage.ops):
            procs = [op.num_proc for op in stage.ops if op.num_proc and op.num_proc > 0]
            size = min(procs) if procs else max(1, int(self._num_cpus // res.get("num_cpus", 1)))
            if res.get("num_gpus"):
                gpus_total = ray.cluster_resources().get("GPU", 0)
                size = max(1, min(size, int(gpus_total // res["num_gpus"]) or 1))
            out = src.map_batches(_FusedActor, fn_constructor_args=(run,), concurrency=size, batch_size=batch_size,
                                  batch_format="pyarrow", zero_copy_batch=True, **res)
        else:
            out = src.map_batches(_FusedBatchFn(run), batch_size=batch_size, batch_format="pyarrow",
                                  zero_copy_batch=True, scheduling_strategy="SPREAD", **res)
        try:
            out_refs = list(out.materialize().to_arrow_refs())
        except Exception as e:
            err = _op_error_from(e)
            if err is not None:
                raise err from None
            raise
        split = remote(_split_errors, num_returns=2)
        pairs = [split.remote(r) for r in out_refs]
        good = [p[0] for p in pairs]
        n_failed = 0
        for records in ray.get([p[1] for p in pairs]):
            if records:
                n_failed += self.ledger.record(records)
        if n_failed:
            logger.warning(f"[{stage.label}] {n_failed} samples failed and went to {self.ledger.path}")
        result = RayDataset.from_refs(good)
        per_op = counters.collect()
        for op, (rin, rout, errs, secs) in zip(stage.ops, per_op or [(0, 0, 0, 0.0)] * len(stage.ops)):
            rep = reports[id(op)]
            rep.rows_in, rep.rows_out, rep.errors, rep.seconds = rin, rout, errs, secs
        if any(op.fan_out for op in stage.ops):
            result = result.renumbered()
        return result

    def _run_global(self, op: OP, ds: RayDataset) -> RayDataset:
        drop, self._drop_after_dedup = getattr(self, "_drop_after_dedup", []), []
        out = self._run_global_op(op, ds)
        if drop and isinstance(op, Deduplicator):
            out = out.remove_columns(drop)
        return out

    def _run_global_op(self, op: OP, ds: RayDataset) -> RayDataset:
        tracer = getattr(self, "tracer", None)
        if isinstance(op, Deduplicator):
            run_ray = getattr(op, "run_ray", None)
            if callable(run_ray):
                refs, _ = ds.blocks()
                return RayDataset(run_ray(RayDataset.from_refs(refs).ray))
            if op.name == "document_deduplicator" and tracer is None and HashKeys.hash in ds.column_names \
                    and ds.num_rows >= self.exact_dedup_actor_min_rows:
                return self._exact_dedup(ds)
            result, pairs = op.process(ds, show_num=self.cfg["trace_num"] if tracer else 0)
            if tracer is not None:
                tracer.duplicates(op.name, pairs)
            return result
        return op.process(ds)

    def _exact_dedup(self, ds: RayDataset) -> RayDataset:
        """Keep the first sample of each ``__dj__hash``: hash sets sharded over actors, keyed by stable id."""
        import ray

        refs, _ = ds.blocks()
        n = max(1, min(8, self._num_cpus))
        shard_cls = ray.remote(num_cpus=0)(_HashShard)
        shards = [shard_cls.remote() for _ in range(n)]
        try:
            ray.get([remote(_offer_block).remote(r, shards) for r in refs])
            kept = [remote(_keep_first_block).remote(r, shards) for r in refs]
            ray.wait(kept, num_returns=len(kept))
            return RayDataset.from_refs(kept)
        finally:
            for s in shards:
                ray.kill(s)

    # -- export ---------------------------------------------------------------------------
    def _export(self, ds: RayDataset):
        from data_juicer.core.exporter import Exporter

        cfg = self.cfg
        t = time.time()
        table = ds.arrow_table()
        exporter = Exporter(cfg["export_path"], export_type=cfg.get("export_type"),
                            export_shard_size=cfg["export_shard_size"],
                            keep_stats_in_res_ds=cfg["keep_stats_in_res_ds"],
                            keep_hashes_in_res_ds=cfg["keep_hashes_in_res_ds"],
                            num_proc=self.np if cfg["export_in_parallel"] else 1)
        report = exporter.export(table)
        logger.info(f"exported {report.rows} samples in {time.time() - t:.2f}s")
        return report


__all__ = ["RayExecutor", "RayDataset", "validate_for_ray", "ray_support", "unify"]
