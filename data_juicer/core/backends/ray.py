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
from data_juicer.core.ray_dataset import (ID, RayDataset, data_context, remote, runtime_env_for, set_inherited_env,
                                          to_table)
from data_juicer.core.runner import FusedRun, OpError
from data_juicer.ops.base import OP, Deduplicator
from data_juicer.utils.constant import Fields
from data_juicer.utils.errors import ConfigError

# a JSON Lines byte range read by one task: about 1/(4 x CPUs) of the input, at least this
_JSONL_MIN_CHUNK = 4 << 20

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


def _jsonl_chunk_bytes(path: str, start: int, end: int) -> bytes:
    """The lines of ``path`` that start in ``[start, end)`` (a line belongs to the chunk it starts in)."""
    with open(path, "rb") as f:
        if start > 0:
            f.seek(start - 1)
            f.readline()  # the rest of the line that started before ``start`` (or just its newline)
        begin = f.tell()
        if begin >= end:
            return b""
        buf = f.read(end - begin)
        if buf and not buf.endswith(b"\n"):
            buf += f.readline()  # the line that starts before ``end`` runs on past it
    return buf


def _read_jsonl_chunk(path: str, start: int, end, text_key: str, read_opts: dict):
    """One byte range of a JSON Lines file (``end`` None: the whole file, decompressed by its suffix)
    parsed by pyarrow in a task: (the table, (rows, null texts, schema)). The checks of
    ``check_jsonl_files`` (UTF-8, the text field a string) are made on the parsed rows; a chunk that
    does not parse is reported by file and line, as the default loader does."""
    import io

    import pyarrow as pa
    import pyarrow.json as paj

    from data_juicer.core.loader import _open_binary, check_json_batch, json_lines_error

    try:
        if end is None:
            with _open_binary(path) as f:
                buf = f.read()
        else:
            buf = _jsonl_chunk_bytes(path, start, end)
        if not buf.strip():
            table = pa.table({})
        else:
            kwargs = {"read_options": paj.ReadOptions(**read_opts)} if read_opts else {}
            table = paj.read_json(io.BytesIO(buf), **kwargs)
            check_json_batch(table, text_key)
    except Exception as e:
        raise json_lines_error(path, text_key, e) from None
    nulls = table.column(text_key).null_count if text_key in table.column_names else 0
    return table, (table.num_rows, nulls, table.schema)


def _with_suffix(table, suffix: str):
    import pyarrow as pa

    return table.append_column(Fields.suffix, pa.array([suffix] * table.num_rows, pa.string()))


def _apply_block(fn, table):
    """``fn`` (a ``_FusedBatchFn``) on one block, as a task: the streamed pass after a lineage stage."""
    return fn(table)


def _apply_batches(fn, batch_size: int, *tables):
    """``fn`` on consecutive blocks (one table), ``batch_size`` rows at a time, as a task of a
    row-wise pass: (the result block, its row count). No Ray Data plan, no operator start-up."""
    from data_juicer.core.ray_dataset import unify

    table = tables[0] if len(tables) == 1 else unify(list(tables))
    n = table.num_rows
    if n <= batch_size:
        out = fn(table)
    else:
        out = unify([fn(table.slice(i, batch_size)) for i in range(0, n, batch_size)])
    return out, out.num_rows


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


def _task_groups(refs: list, counts: list, batch_size: int) -> list[list]:
    """Consecutive blocks in groups of at least ``batch_size`` rows (a block that size is a group of
    its own): a task's batches are whole ``batch_size`` batches, as Ray Data's ``map_batches`` bundles
    them, so small blocks never make batches (and ledger rows) of their own."""
    groups, cur, rows = [], [], 0
    for ref, n in zip(refs, counts):
        cur.append(ref)
        rows += n
        if rows >= batch_size:
            groups.append(cur)
            cur, rows = [], 0
    if cur:
        if groups and rows < batch_size:
            groups[-1].extend(cur)
        else:
            groups.append(cur)
    return groups


def _run_ray(op: OP, ds: RayDataset):
    """The op's own ``run_ray`` on the blocks as a Ray Data ``Dataset``, or None; the ``Dataset`` is
    built (a metadata task per block) only for an op that has a ``run_ray`` of its own."""
    if type(op).run_ray is OP.run_ray:
        return None
    min_rows = getattr(op, "ray_actor_min_rows", None)  # e.g. the sharded exact dedup: only from that many rows
    if isinstance(min_rows, int) and ds.num_rows < min_rows:
        return None
    return op.run_ray(RayDataset.from_refs(ds.blocks()[0]).ray)


def _start_local_ray(kwargs: dict):
    """A local Ray instance for this job, as ``ray.init(address="local")`` starts one, without the
    autoscaler monitor and the log monitor: the instance never scales and ``log_to_driver`` is off,
    and the two took 3.5-4.3 CPU s of a 50,000-document run on 2 cores (benchmarks/ray/README.md).
    Returns the node (``stop`` kills its processes); where Ray's internals differ from these (another
    Ray version), ``ray.init(address="local")`` as before, and None."""
    import ray

    try:
        from ray._common.usage import usage_lib
        from ray._private.authentication.authentication_token_setup import (
            enable_token_auth_by_default,
            ensure_token_if_auth_enabled,
        )
        from ray._private.node import Node
        from ray._private.parameter import RayParams

        enable_token_auth_by_default()  # what ray.init does before it starts a cluster
        ensure_token_if_auth_enabled({}, create_token_if_missing=True)
        usage_lib.set_usage_stats_enabled_via_env_var(False)
        params = RayParams(include_dashboard=False, no_monitor=True, include_log_monitor=False)
        node = Node(ray_params=params, head=True, shutdown_at_exit=False, spawn_reaper=True, ray_init_cluster=True)
    except Exception as e:  # noqa: BLE001 - Ray's private start-up API changed: its public one
        logger.debug(f"lean local Ray start unavailable ({type(e).__name__}: {e}); ray.init(address='local')")
        ray.init(address="local", **kwargs)
        return None
    try:
        ray.init(address=node.address, **kwargs)
    except BaseException:
        node.kill_all_processes(check_alive=False, allow_graceful=False, wait=True)
        raise
    return node


class _NoSigtermWarning(logging.Filter):
    """ray.init in a thread says it set no SIGTERM handler: ``start`` set the same one."""

    def filter(self, record):
        return "SIGTERM handler is not set" not in record.getMessage()


_WARM_TEXTS = ["Warm-up sample one. It has <b>markup</b>, a link http://example.com/a?b=1, an e-mail "
               "a@b.org and 10.0.0.1;\nsecond line with words words words repeated repeated.",
               "Second warm-up document \u2014 caf\u00e9 na\u00efve, 123 456, punctuation!!! ... end"]


def _warmable(cls) -> bool:
    """Op classes the worker warm-up builds: row-wise text ops with no model (a model loads in an
    actor, not in these workers)."""
    from data_juicer.ops.base import Filter, Mapper

    return (isinstance(cls, type) and issubclass(cls, (Mapper, Filter, Deduplicator))
            and getattr(cls, "modality", "") == "text" and not getattr(cls, "uses_model", False))


def _warm_up_worker(entries: list, text_key: str, work_dir: str) -> int:
    """Build the ops of ``entries`` and run them (a ``FusedRun``) on two short samples in this worker;
    any failure is ignored (this only loads what the ops load at their first batch)."""
    from data_juicer.ops.build import build_entry

    ops = []
    for e in entries:
        try:
            op = build_entry(e, "warm-up")
            if not needs_actor(op) and (op.is_row_wise or isinstance(op, Deduplicator)):
                ops.append(op)
        except Exception:  # noqa: BLE001
            pass
    for op in ops:  # one op at a time: one that fails on these samples does not stop the others
        try:
            FusedRun([op], mark_errors=True)({text_key: list(_WARM_TEXTS)})
        except Exception:  # noqa: BLE001
            pass
    import pyarrow as pa

    return pa.table({"n": [len(ops)]})  # a table back through Ray's Arrow serializer: its imports too


class RayBackend(Backend):
    name = "ray"
    checkpoint_subdir = "ray"
    no_effect = ("cache_compress",)  # the datasets cache is Hugging Face's
    # consecutive deduplicators hash in one pass (executor.plan_stages), as on the default executor:
    # the later ones' hash columns stay in the blocks through the earlier ones' row selection
    merges_hashing = True

    def __init__(self, recipe, job):
        super().__init__(recipe, job)
        self._own_ray = False
        self._node = None  # the local Ray instance this backend started (_start_local_ray)
        self._num_cpus = 1
        self._drop_after_dedup: list[str] = []  # hash columns of a hashing-only pass, dropped after its dedups
        self._dedups_left = 0  # how many dedups (in a row) the pending hash columns are for

    @property
    def workers(self) -> int:
        self._ready()
        return self._num_cpus

    # -- Ray ------------------------------------------------------------------------------
    def start(self) -> None:
        """Start (or join) Ray in a thread: the driver builds the recipe's ops meanwhile (the
        executor's ``build_ops``, seconds of imports and compiled-kernel loads), and the first
        step that needs Ray (``load``, ``restore``, ``workers``) waits for it (``_ready``)."""
        import threading

        self._start_error = None
        self._started = threading.Event()
        self._release = threading.Event()

        def boot():
            try:
                self._start_ray()
            except BaseException as e:  # noqa: BLE001 - raised again by _ready, in the caller's thread
                self._start_error = e
            finally:
                self._started.set()
            # Ray's daemons die with the thread that started them (PR_SET_PDEATHSIG is per thread on
            # Linux): this thread lives until ``stop`` has shut Ray down
            self._release.wait()

        if threading.current_thread() is threading.main_thread():  # what ray.init does in the main thread
            import signal

            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))
            logging.getLogger("ray._private.worker").addFilter(_NoSigtermWarning())
        self._starter = threading.Thread(target=boot, name="dj-ray-start", daemon=True)
        self._starter.start()

    def _ready(self) -> None:
        if getattr(self, "_starter", None) is None:
            return
        self._started.wait()
        if self._start_error is not None:
            err, self._start_error = self._start_error, None
            raise err

    def _start_ray(self) -> None:
        import ray

        if not ray.is_initialized():
            address = self.recipe.ray_address or "auto"
            if address in ("auto", "local"):
                address = os.environ.get("RAY_ADDRESS") or None
            kwargs = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
            if address is None:
                logger.info("starting a local Ray instance")
                inherited = dict(os.environ)  # what its raylet, so every worker, starts with
                self._node = _start_local_ray(kwargs)  # never joins a cluster some other job started
                set_inherited_env(inherited)
            else:
                logger.info(f"connecting to the Ray cluster at {address}")
                ray.init(address=address, **kwargs)
            self._own_ray = True
        self._num_cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        for name in ("ray.data", "ray"):
            logging.getLogger(name).setLevel(logging.WARNING)
        self._ship_custom_ops()
        if self._own_ray:  # a Ray this process had started already (tests, notebooks) has its workers warm
            self._warm_up()
        logger.info(f"Ray: {self._num_cpus} CPUs")

    def _warm_up(self) -> None:
        """One task per CPU (spread over the nodes) that builds the recipe's row-wise text ops and
        runs them on two short samples, so each worker imports ``data_juicer``, the ops and their
        lazy dependencies (numba and its compiled kernels, ftfy...) while the driver builds its ops
        and reads the input, not at its first batch. The result is dropped; nothing waits for it.
        Off unless ``DJ_RAY_WARM_UP=1``: in same-run A/B rounds on the shared 2-core machine it cost
        3-4 CPU s in the load and the row pass took no less CPU; without the fresh workers its own
        variable used to cause (``set_inherited_env``), still +1-1.7 CPU s and no gain (benchmarks/ray/README.md)."""
        if os.environ.get("DJ_RAY_WARM_UP", "0") != "1":
            return
        entries = [e for e in self.recipe.ops if _warmable(e.cls)]
        if not entries:
            return
        try:
            import ray

            opts = {"scheduling_strategy": "SPREAD"}
            env = runtime_env_for()  # the same workers as the passes' tasks (the driver's DJ_* variables)
            if env:
                opts["runtime_env"] = env
            task = remote(_warm_up_worker, **opts)
            self._warm_refs = [task.remote(entries, self.recipe.text_key, self.job.dir)
                               for _ in range(self._num_cpus)]
            del ray
        except Exception as e:  # noqa: BLE001 - only a head start
            logger.debug(f"Ray worker warm-up not sent: {e}")

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
        try:
            self._ready()
        except BaseException:  # noqa: BLE001 - the start's error was (or is being) raised elsewhere
            pass
        if self._own_ray:
            import ray

            ray.shutdown()
            self._own_ray = False
            set_inherited_env(None)
        node, self._node = getattr(self, "_node", None), None
        if node is not None:  # the local instance _start_local_ray started (ray.shutdown only disconnected)
            node.kill_all_processes(check_alive=False, allow_graceful=True, wait=True)
        starter = getattr(self, "_starter", None)
        if starter is not None:
            self._release.set()
            starter.join()
            self._starter = None

    # -- load -----------------------------------------------------------------------------
    def _num_blocks(self, rows: int) -> int:
        n = self.recipe.override_num_blocks
        if n:
            return max(1, int(n))
        # 8 blocks per CPU: a pass's tasks go to whichever worker is free, so the last one to finish
        # (the time the other workers idle) is at most 1/8 of a worker's share (with 4 per CPU, 2 local
        # nodes x 1 CPU lost ~2 s of a 23 s pass to it)
        return max(1, min(rows, max(8 * self._num_cpus, -(-rows // 20000))))

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

        self._ready()

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
            refs, info = [], []
            for fs, suffix in parts:
                if fmt == "json":  # our own tasks (pyarrow over byte ranges); bad rows: file and line
                    r, i = self._read_jsonl(fs, suffix)
                    refs, info = refs + r, info + i
                else:
                    refs += self._read_part(fs, fmt, suffix)
            return self._prepare(refs, path, info if fmt == "json" else None)
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

    def _read_jsonl(self, files: list[str], suffix) -> tuple[list, list]:
        """(block refs, [(rows, null texts)...]) of JSON Lines files, read by tasks: each plain file
        in byte ranges of about 1/(4 x CPUs) of the input (4-64 MB), split at line starts, each parsed
        by pyarrow; a compressed file in one task. A file whose ranges infer different schemas is
        read again whole (one schema inferred over all its rows, as a whole-file read gives). Ray
        Data's ``read_json`` is not used: on this 2-core machine it took 12-21 s for a 108 MB file
        that pyarrow parses in 0.7-1.2 s in one task (benchmarks/ray/README.md)."""
        import ray

        from data_juicer.core.loader import COMPRESSIONS, DataLoadError, _empty_file, _no_samples_message

        empty = {f: why for f in files if (why := _empty_file(f))}
        if len(empty) == len(files):
            raise DataLoadError(_no_samples_message(files[0], empty[files[0]], len(files)))
        files = [os.path.abspath(f) for f in files if f not in empty]
        sizes = [os.path.getsize(f) for f in files]
        chunk = int(min(64 << 20, max(_JSONL_MIN_CHUNK, sum(sizes) / (4 * self._num_cpus))))
        opts = dict(self.recipe.read_options or {})
        text_key = self.recipe.text_key
        read = remote(_read_jsonl_chunk, num_returns=2, scheduling_strategy="SPREAD")
        per_file = []
        for f, size in zip(files, sizes):
            if any(f.lower().endswith(c) for c in COMPRESSIONS):
                ranges = [(0, None)]
            else:
                n = max(1, round(size / chunk))
                step = -(-size // n)
                ranges = [(a, min(size, a + step)) for a in range(0, size, step)] or [(0, None)]
            per_file.append([read.remote(f, a, b, text_key, opts) for a, b in ranges])
        refs, info = [], []
        for f, pairs in zip(files, per_file):
            try:
                got = [ray.get(i) for _, i in pairs]
            except ray.exceptions.RayTaskError as e:
                cause = getattr(e, "cause", None)
                if isinstance(cause, Exception):
                    raise cause from None
                raise
            schemas = {g[2] for g in got if g[0]}
            if len(schemas) > 1:  # e.g. a field null in one range, a string in another
                t, i = read.remote(f, 0, None, text_key, opts)
                pairs, got = [(t, i)], [ray.get(i)]
            for (t, _), g in zip(pairs, got):
                if g[0]:
                    refs.append(t)
                    info.append((g[0], g[1]))
        if suffix is not None:
            add = remote(_with_suffix)
            refs = [add.remote(ref, suffix) for ref in refs]
        return refs, info

    def _read_native(self, files: list[str], fmt: str):
        import ray.data

        data_context()

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

    def _prepare(self, refs: list, path: str, info: list | None = None) -> RayDataset:
        """Stable ids in file order, media paths made absolute, null texts to the ledger; even blocks.
        ``info``: (rows, null texts) of each block, when the read tasks returned it."""
        import ray

        from data_juicer.core.loader import DataLoadError
        from data_juicer.core.ray_dataset import _block_info, _null_text_rows, _prepare_slice

        text_key = self.recipe.text_key
        if info is None:
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
            pieces = max(1, round(n / per))  # a block near the target size stays whole (no 50-row tails)
            step = -(-n // pieces) if n else 1
            for start in range(0, n, step):
                length = min(step, n - start)
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
        refs, counts = ds.blocks()
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
            out = RayDataset.from_refs(refs).ray.map_batches(fn_cls, fn_constructor_args=args, concurrency=size, batch_size=batch_size,
                                  batch_format="pyarrow", zero_copy_batch=True, **res)
        else:  # plain tasks, one per block (cheaper than a Ray Data plan: no operator start-up, no bundling)
            out = None
            task = remote(_apply_batches, num_returns=2, scheduling_strategy="SPREAD")
            task = task.options(**res) if res else task
            fn_ref = ray.put(fn_cls(*args))
            pairs = [task.remote(fn_ref, batch_size, *group) for group in _task_groups(refs, counts, batch_size)]
        try:
            if out is not None:
                good, counts = list(out.materialize().to_arrow_refs()), None
            else:
                good, counts = [t for t, _ in pairs], ray.get([c for _, c in pairs])
        except Exception as e:
            err = _op_error_from(e)
            if err is not None:
                raise err from None
            raise
        finally:  # failed rows were written beside the job's ledger by the workers, per batch
            n_failed = absorb_ledger_parts(self.ledger, parts)
        if n_failed:
            logger.warning(f"[{stage.label}] {n_failed} samples failed and went to {self.ledger.path}")
        result = RayDataset.from_refs(good, counts)
        if any(op.fan_out for op in stage.ops):
            result = result.renumbered()
        self._drop_after_dedup = [c for c in result.column_names if c not in before] if hash_only else []
        self._dedups_left = len(stage.dedups) if hash_only else 0
        return result

    def run_global(self, op: OP, ds: RayDataset, show_num: int = 0):
        # the hashing-only pass's columns go after the last of the dedups it hashed for
        self._dedups_left = max(0, self._dedups_left - 1)
        drop = self._drop_after_dedup if not self._dedups_left else []
        if not self._dedups_left:
            self._drop_after_dedup = []
        ds.ledger = self.ledger
        pairs = None
        if isinstance(op, Deduplicator):
            out = _run_ray(op, ds) if not show_num else None
            if out is not None:
                result = RayDataset(out)
            else:
                result, pairs = op.process(ds, show_num=show_num)
            if drop:
                result = result.remove_columns(drop)
        else:
            out = _run_ray(op, ds)
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
        self._drop_after_dedup, self._dedups_left = [], 0
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
        self._ready()
        return RayDataset.read_parquet_folder(folder)

    # -- export ---------------------------------------------------------------------------
    def export(self, ds: RayDataset, exporter):
        from data_juicer.core.backends.ray_export import export_blocks

        return export_blocks(ds, exporter)
