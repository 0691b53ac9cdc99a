"""Ray Data backend (``executor_type: ray``): the same recipe, the same output, on a Ray cluster.

- a run of row-wise ops is one ``map_batches`` of the executor's ``FusedRun`` (plain tasks for
  CPU ops; an actor pool, built once per actor, when an op loads a model or asks for GPUs), so
  failing samples travel as the ``__dj__error__`` column and land in the job's ledger;
- a deduplicator runs its own ``run_ray(ds)`` when it has one (the sharded exact dedup, MinHash
  LSH...), else its usual ``process`` on the ``RayDataset`` facade (a column gathered to the
  driver, the selection applied block by block in the workers), as selectors do.

Order: every sample carries a stable id (``__dj__index__``) and Ray Data runs with
``preserve_order``, so the output has the default executor's order and bytes.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys

from loguru import logger

from data_juicer.core.backends.base import Backend
from data_juicer.core.ray_dataset import ID, RayDataset, remote, runtime_env_for, to_table
from data_juicer.core.runner import FusedRun, OpError
from data_juicer.ops.base import OP, Deduplicator
from data_juicer.utils.constant import Fields
from data_juicer.utils.errors import ConfigError

# formats Ray Data reads natively (anything else goes through the default loader, then to Ray)
_RAY_FORMATS = ("json", "parquet", "csv", "tsv")


def needs_actor(op: OP) -> bool:
    """Ops that load a model or use GPUs run in an actor pool (built once per actor)."""
    return bool(op.uses_model or (op.num_gpus or 0) > 0 or op.accelerator == "cuda"
                or op.ray_execution_mode == "actor")


def _memory_bytes(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    s = str(value).strip().upper().replace("IB", "B")
    for unit, mult in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * mult
    return float(s)


def stage_resources(ops) -> dict:
    """Ray resources per worker of a pass: the largest any of its ops asks for."""
    res = {}
    cpus = [op.num_cpus for op in ops if op.num_cpus]
    gpus = [op.num_gpus for op in ops if op.num_gpus]
    mems = [_memory_bytes(op.memory) for op in ops if op.memory]
    if cpus:
        res["num_cpus"] = max(cpus)
    if gpus:
        res["num_gpus"] = max(gpus)
    if mems:
        res["memory"] = max(mems)
    return res


# -- block-level steps (Ray tasks) -------------------------------------------------------------
def _split_errors(table):
    """(rows without a failure, the failed rows as ledger records) of one block."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if Fields.error not in table.column_names:
        return table, []
    col = table.column(Fields.error)
    if pa.types.is_null(col.type) or col.null_count == len(col):  # e.g. a batch whose rows were all dropped
        return table.drop_columns([Fields.error]), []
    failed = pc.fill_null(pc.greater(pc.utf8_length(col), 0), False)
    n_failed = pc.sum(failed).as_py() or 0
    records = []
    if n_failed:
        for r in table.filter(failed).to_pylist():
            records.append(dict(json.loads(r[Fields.error]), sample=r))
        table = table.filter(pc.invert(failed))
    return table.drop_columns([Fields.error]), records


_FATAL = re.compile(r"DJ-OP-ERROR\[([0-9a-f]+)\]")


def _run_fused(run: FusedRun, table):
    try:
        return to_table(run(table.to_pydict()))
    except OpError as e:  # Ray keeps only the text of a worker's exception: carry the details in it
        info = json.dumps({"op": e.op, "message": str(e)}, ensure_ascii=False).encode("utf-8").hex()
        raise RuntimeError(f"DJ-OP-ERROR[{info}]") from None



def _read_text_files(paths: list, suffix) -> "pa.Table":
    """Plain-text files as one sample each (column ``text``), as the default loader reads them:
    decompressed by suffix, UTF-8, universal newlines; with ``suffix``, the ``__dj__suffix__`` column."""
    import io

    import pyarrow as pa

    from data_juicer.core.loader import _open_binary

    texts = []
    for p in paths:
        with _open_binary(p) as raw:
            try:
                texts.append(io.TextIOWrapper(raw, encoding="utf-8").read())
            except UnicodeDecodeError as e:
                raise ValueError(f"'{p}' is not UTF-8 text ({e}); convert it to UTF-8") from None
    table = pa.table({"text": pa.array(texts, pa.string())})
    return _with_suffix(table, suffix) if suffix is not None else table


def _with_suffix(table, suffix: str):
    import pyarrow as pa

    return table.append_column(Fields.suffix, pa.array([suffix] * table.num_rows, pa.string()))


def _apply_block(fn, table):
    """``fn`` (a ``_FusedBatchFn``) on one block, as a task: the streamed pass after a lineage stage."""
    return fn(table)


class _FusedBatchFn:
    """``FusedRun`` on an Arrow batch (tasks; or an actor, built once, so a model stays loaded).

    With ``ledger_dir``, the batch's failed rows are split off here, in the worker, and written
    as a ledger part file of their own (``<first row id>-<random>.jsonl``, in the job ledger's
    format): the failed samples never travel through the object store or the driver, which only
    appends the finished parts to the job's ledger, a line at a time."""

    def __init__(self, run: FusedRun, ledger_dir: str | None = None, id_keys: tuple = ("id",)):
        self.run = run
        self.ledger_dir = ledger_dir
        self.id_keys = tuple(id_keys)

    def __call__(self, table):
        out = _run_fused(self.run, table)
        if self.ledger_dir is None:
            return out
        out, records = _split_errors(out)
        if records:
            _write_ledger_part(self.ledger_dir, records, self.id_keys)
        return out


class _HashOnlyFn(_FusedBatchFn):
    """A pass that is only deduplicators' hashing: the ops see the hash input columns alone
    (``hash_only``), and the hash columns they add are appended to the block as it is, so the other
    columns (text, stats, meta...) are not converted to Python and back. A batch where a row fails
    runs again whole, so the ledger gets the full sample, as in any other pass."""

    def __init__(self, run: FusedRun, ledger_dir: str | None, id_keys: tuple, cols: tuple):
        super().__init__(run, ledger_dir, id_keys)
        self.cols = tuple(cols)

    def __call__(self, table):
        import pyarrow.compute as pc

        sub = table.select([c for c in self.cols if c in table.column_names])
        out = _run_fused(self.run, sub)
        if Fields.error in out.column_names:
            col = out.column(Fields.error)
            if col.null_count < len(col) and (pc.sum(pc.fill_null(pc.greater(pc.utf8_length(col), 0), False)).as_py()
                                              or 0):
                return super().__call__(table)
        if out.num_rows != table.num_rows:
            return super().__call__(table)
        for c in out.column_names:
            if c not in table.column_names and c != Fields.error:
                table = table.append_column(c, out.column(c))
        return table


def _write_ledger_part(folder: str, records: list, id_keys) -> None:
    """One batch's failed rows as a ledger part (named by the first row id, so parts sort in order)."""
    import uuid

    from data_juicer.core.ledger import ErrorLedger

    ids = [r["sample"].get(ID) for r in records if isinstance(r.get("sample"), dict)]
    first = min((i for i in ids if isinstance(i, int)), default=0)
    name = f"{first:012d}-{uuid.uuid4().hex[:8]}"
    tmp = os.path.join(folder, f".{name}.tmp")
    ErrorLedger(tmp, id_keys).record(records)
    os.replace(tmp, os.path.join(folder, f"{name}.jsonl"))  # only whole parts carry the .jsonl name


def absorb_ledger_parts(ledger, folder: str) -> int:
    """Append the ledger parts of ``folder`` to the job's ``ledger`` in row order, streaming (a line
    at a time), count them per op as ``ErrorLedger.record`` does, and remove the folder."""
    import shutil

    n = 0
    try:
        names = sorted(f for f in os.listdir(folder) if f.endswith(".jsonl"))
    except FileNotFoundError:
        return 0
    if names:
        os.makedirs(os.path.dirname(ledger.path) or ".", exist_ok=True)
        with open(ledger.path, "ab") as out:
            for name in names:
                with open(os.path.join(folder, name), "rb") as f:
                    for line in f:
                        out.write(line)
                        ledger.counts[json.loads(line).get("op", "?")] += 1
                        n += 1
    shutil.rmtree(folder, ignore_errors=True)
    return n


def _op_error_from(exc: BaseException) -> OpError | None:
    """The ``OpError`` a worker raised, rebuilt from the text Ray passes back."""
    m = _FATAL.search(str(exc))
    if not m:
        return None
    info = json.loads(bytes.fromhex(m.group(1)).decode("utf-8"))
    err = OpError.__new__(OpError)
    RuntimeError.__init__(err, info["message"])
    err.op, err.cause = info["op"], None
    return err


class RayBackend(Backend):
    name = "ray"
    checkpoint_subdir = "ray"
    no_effect = ("cache_compress",)  # the datasets cache is Hugging Face's

    def __init__(self, recipe, job):
        super().__init__(recipe, job)
        self._own_ray = False
        self._num_cpus = 1
        self._drop_after_dedup: list[str] = []

    @property
    def workers(self) -> int:
        return self._num_cpus

    # -- Ray ------------------------------------------------------------------------------
    def start(self) -> None:
        import ray
        import ray.data

        if not ray.is_initialized():
            address = self.recipe.ray_address or "auto"
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
        logger.info(f"Ray: {self._num_cpus} CPUs")

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

    def stop(self) -> None:
        if self._own_ray:
            import ray

            ray.shutdown()
            self._own_ray = False

    # -- load -----------------------------------------------------------------------------
    def _num_blocks(self, rows: int) -> int:
        n = self.recipe.override_num_blocks
        if n:
            return max(1, int(n))
        return max(1, min(rows, max(4 * self._num_cpus, -(-rows // 20000))))

    def _native_parts(self):
        """(path, format, [(files, suffix or None)...]) when Ray reads the input itself, in the
        default loader's row order (one part per file suffix for text files or ``add_suffix``), else
        None: weighted mixes, ``dataset`` configs, lenient JSON Lines, ``load_dataset_kwargs``,
        JSON documents (``.json``), several formats in one folder."""
        from data_juicer.core.loader import file_suffix, format_of, list_files, parse_dataset_path

        r = self.recipe
        if r.dataset_config or r.load_jsonl_lenient or r.load_dataset_kwargs:
            return None
        specs = parse_dataset_path(r.dataset_path)
        if len(specs) != 1:
            return None
        files = list_files(specs[0].path, list(r.suffixes))
        fmts = {format_of(f) for f in files}
        if len(fmts) != 1 or not fmts <= set(_RAY_FORMATS) | {"text"}:
            return None
        fmt = fmts.pop()
        if fmt == "json" and not all(".jsonl" in os.path.basename(f).lower() for f in files):
            return None
        if fmt != "text" and not r.add_suffix:
            return specs[0].path, fmt, [(files, None)]
        by_suffix: dict[str, list[str]] = {}
        for f in files:
            by_suffix.setdefault(file_suffix(f), []).append(f)
        return specs[0].path, fmt, [(fs, suf if r.add_suffix else None) for suf, fs in by_suffix.items()]

    def load(self) -> RayDataset:
        from data_juicer.core.loader import DataLoadError

        native = self._native_parts()
        if native is None:  # mixes, JSON documents, lenient reads: the default loader, then Ray
            from data_juicer.core.backends.hf import HFBackend

            logger.info("reading the input with the default loader on the driver (a weighted mix, dataset configs, "
                        "JSON documents, lenient JSON Lines or several formats), then putting it in the object store")
            hf = HFBackend(self.recipe, self.job).load()
            if hf._indices is not None:
                hf = hf.flatten_indices()
            table = hf.data.table
            if ID in table.column_names:
                table = table.drop_columns([ID])
            import numpy as np
            import pyarrow as pa

            table = table.append_column(ID, pa.array(np.arange(table.num_rows, dtype=np.int64)))
            return RayDataset.from_table(table, self._num_blocks(table.num_rows))
        path, fmt, parts = native
        files = [f for fs, _ in parts for f in fs]
        try:
            if fmt == "json":  # bad rows: file and line, before Ray Data fails (and logs a misleading error)
                self._check_jsonl(files)
            refs = []
            for fs, suffix in parts:
                refs += self._read_part(fs, fmt, suffix)
            return self._prepare(refs, path)
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

    def _read_part(self, files: list[str], fmt: str, suffix) -> list:
        """Block refs of one part of the input, read in the cluster (never through the driver)."""
        if fmt == "text":  # one sample per file (as the default loader's text builder), files grouped per task
            read = remote(_read_text_files)
            per = max(1, -(-len(files) // (4 * self._num_cpus)))
            per = min(per, 256)
            return [read.remote([os.path.abspath(f) for f in files[i:i + per]], suffix)
                    for i in range(0, len(files), per)]
        refs = list(self._read_native(files, fmt).materialize().to_arrow_refs())
        if suffix is not None:
            add = remote(_with_suffix)
            refs = [add.remote(ref, suffix) for ref in refs]
        return refs

    def _check_jsonl(self, files: list[str]) -> None:
        """``check_jsonl_files`` in a Ray task, not on the driver: the files are parsed (streamed) in
        the cluster, so the driver neither spends the CPU of a whole extra JSON parse nor its memory.
        (Not while Ray Data reads: a read failing on a bad line would log its own traceback first.)"""
        import ray

        from data_juicer.core.loader import check_jsonl_files

        try:
            ray.get(remote(check_jsonl_files).remote([os.path.abspath(f) for f in files], self.recipe.text_key))
        except ray.exceptions.RayTaskError as e:
            cause = getattr(e, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None
            raise

    def _read_native(self, files: list[str], fmt: str):
        import ray.data

        if fmt == "json":
            import pyarrow.json as paj

            opts = dict(self.recipe.read_options or {})
            kwargs = {"read_options": paj.ReadOptions(**opts)} if opts else {}
            return ray.data.read_json(files, file_extensions=None, **kwargs)
        if fmt == "parquet":
            return ray.data.read_parquet(files, file_extensions=None)
        import pyarrow.csv as pacsv

        parse = pacsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",")
        return ray.data.read_csv(files, parse_options=parse, file_extensions=None)

    def _prepare(self, refs: list, path: str) -> RayDataset:
        """Stable ids in file order, media paths made absolute, null texts to the ledger; even blocks."""
        import ray

        from data_juicer.core.loader import DataLoadError
        from data_juicer.core.ray_dataset import _block_info, _null_text_rows, _prepare_slice

        text_key = self.recipe.text_key
        info = ray.get([remote(_block_info).remote(r, text_key) for r in refs])
        names = RayDataset.from_refs(refs, [n for n, _ in info]).column_names
        if text_key not in names:
            raise DataLoadError(
                f"'{path}' has no field '{text_key}' (its fields: {', '.join(n for n in names if n != ID)}); "
                f"set text_keys in the recipe to the field that holds the text")
        total = sum(n for n, _ in info)
        per = max(1, -(-total // self._num_blocks(total)))
        base = path if os.path.isdir(path) else os.path.dirname(path)
        media = tuple(k for k in self.recipe.media_keys if k in names)
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

    def head(self, ds: RayDataset, n: int) -> dict:
        n = min(n, ds.num_rows)
        if not n:
            return {}
        table = ds.select(range(n)).arrow_table()
        return table.drop_columns([ID]).to_pydict() if ID in table.column_names else table.to_pydict()

    def columns(self, ds: RayDataset, names):
        import pyarrow as pa

        cols = [c for c in names if c in ds.column_names]
        return ds.arrow_table(cols) if cols else pa.table({})

    def first_row(self, ds: RayDataset, exclude=()) -> dict | None:
        rows = ds.rows([0]) if ds.num_rows else []
        return {k: v for k, v in rows[0].items() if k not in exclude} if rows else None

    # -- stages ---------------------------------------------------------------------------
    def run_pass(self, stage, ds: RayDataset, run, batch_size: int, num_proc: int, hash_only: list | None):
        import ray

        before = set(ds.column_names) if hash_only else None
        refs, _ = ds.blocks()
        src = RayDataset.from_refs(refs).ray
        res = stage_resources(stage.ops)
        env = runtime_env_for(stage.ops)  # the driver's DJ_* variables and the ops' own runtime_env
        if env:
            res["runtime_env"] = env
        if res.get("num_gpus") and ray.cluster_resources().get("GPU", 0) < res["num_gpus"]:
            raise ConfigError(f"[{stage.label}] asks for num_gpus={res['num_gpus']} per worker, but the Ray cluster "
                              f"has {ray.cluster_resources().get('GPU', 0):g} GPUs; set num_gpus: 0 (and "
                              f"accelerator: cpu) or run on a cluster with GPUs")
        import uuid

        parts = os.path.join(self.job.dir, ".ledger-parts", uuid.uuid4().hex[:12])
        os.makedirs(parts, exist_ok=True)
        args = (run, parts, self.ledger.id_keys)
        fn_cls = _FusedBatchFn
        if hash_only:  # a dedup's hashing of known columns: only those go through Python
            fn_cls, args = _HashOnlyFn, args + (tuple(hash_only),)
        if any(needs_actor(op) for op in stage.ops):
            procs = [op.num_proc for op in stage.ops if op.num_proc and op.num_proc > 0]
            size = min(procs) if procs else max(1, int(self._num_cpus // res.get("num_cpus", 1)))
            if res.get("num_gpus"):
                gpus_total = ray.cluster_resources().get("GPU", 0)
                size = max(1, min(size, int(gpus_total // res["num_gpus"]) or 1))
            out = src.map_batches(fn_cls, fn_constructor_args=args, concurrency=size, batch_size=batch_size,
                                  batch_format="pyarrow", zero_copy_batch=True, **res)
        else:
            out = src.map_batches(fn_cls(*args), batch_size=batch_size, batch_format="pyarrow",
                                  zero_copy_batch=True, scheduling_strategy="SPREAD", **res)
        try:
            good = list(out.materialize().to_arrow_refs())
        except Exception as e:
            err = _op_error_from(e)
            if err is not None:
                raise err from None
            raise
        finally:  # failed rows were written beside the job's ledger by the workers, per batch
            n_failed = absorb_ledger_parts(self.ledger, parts)
        if n_failed:
            logger.warning(f"[{stage.label}] {n_failed} samples failed and went to {self.ledger.path}")
        result = RayDataset.from_refs(good)
        if any(op.fan_out for op in stage.ops):
            result = result.renumbered()
        self._drop_after_dedup = [c for c in result.column_names if c not in before] if hash_only else []
        return result

    def run_global(self, op: OP, ds: RayDataset, show_num: int = 0):
        drop, self._drop_after_dedup = self._drop_after_dedup, []
        ds.ledger = self.ledger
        pairs = None
        if isinstance(op, Deduplicator):
            out = op.run_ray(RayDataset.from_refs(ds.blocks()[0]).ray) if not show_num else None
            if out is not None:
                result = RayDataset(out)
            else:
                result, pairs = op.process(ds, show_num=show_num)
            if drop:
                result = result.remove_columns(drop)
        else:
            out = op.run_ray(RayDataset.from_refs(ds.blocks()[0]).ray)
            if out is not None:
                result = RayDataset(out)
            else:  # the op sees the user's columns only (as on the default executor)
                plain = ds.remove_columns([ID])
                plain.ledger = self.ledger
                result = op.process(plain)
            # groupers, lineage stages...: rows may be new, so fresh stable ids in the new order
            result = result.renumbered()
        return result, pairs

    can_stream = True

    def run_streamed(self, op: OP, ds: RayDataset, stage, run, batch_size: int):
        """The pass after a streaming op as one Ray task per ``batch_size`` finished rows, sent
        while the op goes on. The op hands its samples over in input order (``order='input'``:
        a bounded window of samples alive, the driver never holds the whole input or output), so
        the tasks' blocks are already in order: no gather, no sort. Failed rows are ledgered by
        the tasks, as in ``run_pass``. A pass that needs an actor (a model) runs after the op
        instead, as usual (a model would load once per task)."""
        import uuid

        import numpy as np
        import pyarrow as pa
        import ray

        from data_juicer.utils.batch import rows_to_batch

        if any(needs_actor(o) for o in stage.ops):
            mid, _ = self.run_global(op, ds)
            return self.run_pass(stage, mid, run, batch_size, 1, None), mid.num_rows
        self._drop_after_dedup = []
        plain = ds.remove_columns([ID])
        plain.ledger = self.ledger
        res = stage_resources(stage.ops)
        env = runtime_env_for(stage.ops)
        if env:
            res["runtime_env"] = env
        parts = os.path.join(self.job.dir, ".ledger-parts", uuid.uuid4().hex[:12])
        os.makedirs(parts, exist_ok=True)
        task = remote(_apply_block, scheduling_strategy="SPREAD")
        task = task.options(**res) if res else task
        fn_ref = ray.put(_FusedBatchFn(run, parts, self.ledger.id_keys))
        goods: list = []
        n_mid = 0
        pending: list = []

        def send(rows):
            nonlocal n_mid
            table = to_table(rows_to_batch(rows))  # stable ids in stage-output order: ledger parts sort by them
            table = table.append_column(ID, pa.array(np.arange(n_mid, n_mid + len(rows), dtype=np.int64)))
            n_mid += len(rows)
            goods.append(task.remote(fn_ref, table))

        try:
            for burst in op.iter_bursts(plain, order="input"):
                for _, rows in burst:
                    pending.extend(rows)
                while len(pending) >= batch_size:
                    send(pending[:batch_size])
                    del pending[:batch_size]
            if pending:
                send(pending)
            result = RayDataset.from_refs(goods)
            total = result.num_rows  # waits for the tasks (and raises what they raised)
        except Exception as e:
            err = _op_error_from(e)
            if err is not None:
                raise err from None
            raise
        finally:
            n_failed = absorb_ledger_parts(self.ledger, parts)
        if n_failed:
            logger.warning(f"[{stage.label}] {n_failed} samples failed and went to {self.ledger.path}")
        if not total:
            return ds.select([]), n_mid
        return result.renumbered(), n_mid

    # -- checkpoint store -----------------------------------------------------------------
    def save(self, ds: RayDataset, folder: str):
        ds.write_parquet_folder(folder)
        return ds

    def restore(self, folder: str):
        return RayDataset.read_parquet_folder(folder)

    # -- export ---------------------------------------------------------------------------
    def export(self, ds: RayDataset, exporter):
        from data_juicer.core.backends.ray_export import export_blocks

        return export_blocks(ds, exporter)
