"""Hugging Face ``datasets`` backend (``executor_type: default``): ``np`` worker processes on one machine."""

from __future__ import annotations

import json
import os
import sys
from typing import Optional

from loguru import logger

from data_juicer.core.backends import hf_pool
from data_juicer.core.backends.base import Backend
from data_juicer.core.dataset import ArrowRows, DJDataset, numpy_array
from data_juicer.ops.base import Deduplicator
from data_juicer.utils.constant import Fields


_ORDER = "__dj__lineage_order__"  # a streamed row's input index, through the pass after the stage

# ops whose whole run (threaded hashing of an Arrow table, ``hash_table``; a ``process`` over the
# ``DJDataset`` surface that ``ArrowRows`` offers) needs no ``datasets`` (``HFBackend.lean``)
LEAN_OPS = frozenset({"document_minhash_deduplicator", "document_deduplicator", "document_simhash_deduplicator"})


class HFBackend(Backend):
    name = "default"

    # consecutive deduplicators hash in one pass (executor.plan_stages): the later ones' hashes travel
    # through the earlier ones' row selection, in the dataset or beside it (``_pending_extra``)
    merges_hashing = True

    def __init__(self, recipe, job):
        super().__init__(recipe, job)
        self.np = max(1, min(self.recipe.np, os.cpu_count() or 1))
        self._pending_extra = None  # hashes kept beside the data by a hashing-only pass, for the dedup after it
        self._extra_uses = 0  # how many dedups (in a row) the pending hashes are for
        self.lean = self._lean_recipe()

    def _lean_recipe(self) -> bool:
        """Run without importing ``datasets`` where it cannot change the result: every op in
        ``LEAN_OPS``, no checkpoints, a JSONL result (``datasets`` adds its schema metadata to a parquet
        one), no tracer and no cache compression. Row-wise ops (mappers, filters) run in passes of
        ``lean_pass``. The load may still decline (``Loader.load_lean``), a pass may decline
        (``lean_pass.Decline``: it runs on the ``datasets`` path instead), and any step outside the lean
        surface turns the data into a ``datasets.Dataset`` first (``_hf``). ``DJ_LEAN=0`` turns it off."""
        if os.environ.get("DJ_LEAN", "1").strip().lower() in ("0", "false", "no", "off"):
            return False
        r = self.recipe
        try:
            from data_juicer.core.exporter import export_format

            fmt = export_format(r.export_path, r.export_type)
        except Exception:  # noqa: BLE001 - the export reports it
            return False
        from data_juicer.ops.base import Deduplicator, Filter, Mapper

        def lean_op(spec) -> bool:
            cls = getattr(spec, "cls", None)
            row_wise = isinstance(cls, type) and issubclass(cls, (Mapper, Filter)) and not issubclass(cls, Deduplicator)
            return spec.name in LEAN_OPS or row_wise

        return (bool(r.ops) and all(lean_op(s) for s in r.ops) and not r.use_checkpoint and fmt == "jsonl"
                and not r.open_tracer and not r.cache_compress)

    @property
    def workers(self) -> int:
        return self.np

    def start(self) -> None:
        self._prefetch()
        if not self.lean or "datasets" in sys.modules:
            self._datasets_switches()
        elif any(s.name not in LEAN_OPS for s in self.recipe.ops):
            self._import_pandas = _background_import("pandas")
        if self.recipe.cache_compress:
            from data_juicer.core.cache import check_method

            check_method(self.recipe.cache_compress)

    def _datasets_switches(self) -> None:
        import datasets

        # datasets' switch is process-wide: set it for this run both ways, so an earlier run in the
        # same process (the Python API, a test session) with use_cache: false does not leave it off
        if self.recipe.use_cache:
            datasets.enable_caching()
        else:
            datasets.disable_caching()
        if not sys.stderr.isatty():  # plain log lines instead of progress bars
            datasets.disable_progress_bars()

    def _hf(self, ds):
        """``ds`` as a ``datasets.Dataset`` for a step outside the lean surface (``ArrowRows.to_hf``)."""
        if isinstance(ds, ArrowRows):
            self._datasets_switches()
            return ds.to_hf()
        return ds

    def stop(self) -> None:
        from data_juicer.core.loader import _join_prefetch

        _join_prefetch()  # a run that failed before its load: no read left running

    def _prefetch(self) -> None:
        """Start reading a large JSONL input in the background (``Loader.prefetch``) before the
        imports and the op build, which it overlaps. Not when the run may resume from a checkpoint
        (no load then)."""
        if self.recipe.use_checkpoint:
            return
        try:
            loader, specs, max_n = self._loader()
            loader.prefetch(specs, max_n)
        except Exception:  # noqa: BLE001 - load reports whatever this tripped on
            pass

    def _loader(self):
        from data_juicer.core.loader import Loader, parse_dataset_path, specs_from_dataset_config

        r = self.recipe
        if r.dataset_config:
            specs, max_n = specs_from_dataset_config(r.dataset_config)
        else:
            specs, max_n = parse_dataset_path(r.dataset_path), None
        loader = Loader(text_keys=list(r.text_keys), media_keys=r.media_keys,
                        suffixes=list(r.suffixes), add_suffix=r.add_suffix, num_proc=self.np,
                        cache_dir=r.ds_cache_dir, lenient=r.load_jsonl_lenient,
                        tmp_dir=os.path.join(self.job.dir, "tmp"), load_kwargs=dict(r.load_dataset_kwargs))
        return loader, specs, max_n

    # -- data ------------------------------------------------------------------------------
    def load(self):
        r = self.recipe
        loader, specs, max_n = self._loader()
        result = loader.load_lean(specs, max_n) if self.lean else None
        importer, self._import_pandas = getattr(self, "_import_pandas", None), None
        if importer is not None:
            # pyarrow imports pandas the first time it converts Python values (~0.26 CPU s): once, in the
            # background while the ops are built and the file is read, not in every forked worker (and
            # done before anything forks)
            importer.join()
        if result is not None and result.dataset.num_rows:
            ds = result.dataset
            if r.skip_op_error and Fields.row_index not in ds.column_names:
                ds = _add_lean_row_index(ds)
            _drop_mapped_text(ds)
            return ds
        self._datasets_switches()
        result = loader.load(specs, max_n)
        if result.rejected:
            n = self.ledger.record(result.rejected)
            logger.warning(f"{n} input rows could not be loaded; see {self.ledger.path}")
        ds = result.dataset
        if r.skip_op_error and Fields.row_index not in ds.column_names:
            ds = _add_row_index(ds)
        _drop_mapped_text(ds)
        return ds

    def head(self, ds, n: int) -> dict:
        n = min(n, ds.num_rows)
        if isinstance(ds, ArrowRows):
            return ds.slice_table(0, n).to_pydict() if n else {}
        return ds.select(range(n)).to_dict() if n else {}

    def columns(self, ds, names):
        if ds._indices is not None:
            ds = ds.flatten_indices()
        table = ds.data.table
        return table.select([c for c in names if c in table.column_names])

    def first_row(self, ds, exclude=()) -> Optional[dict]:
        if not ds.num_rows:
            return None
        if isinstance(ds, ArrowRows):
            table = ds.slice_table(0, 1)
            return table.select([c for c in table.column_names if c not in exclude]).to_pylist()[0]
        return dict(ds.select_columns([c for c in ds.column_names if c not in exclude])[0])

    # -- stages ----------------------------------------------------------------------------
    def run_pass(self, stage, ds, run, batch_size: int, num_proc: int, hash_only: Optional[list]):
        if hash_only:
            out = self._hash_only(list(stage.dedups), ds, hash_only)
            if out is not None:
                return out
        heavy = any(getattr(o, "modality", "text") in ("image", "audio", "video", "multimodal")
                    for op in stage.ops for o in (getattr(op, "filters", None) or [op]))
        if isinstance(ds, ArrowRows) and run.tracer is None:
            out = self._lean_pass(stage, ds, run, batch_size, num_proc, heavy)
            if out is not None:
                return out
        ds = self._hf(ds)
        map_kwargs = self._cache_kwargs(stage, ds, run)
        pooled, chunk, batch_size, num_proc = self._pass_shape(ds.num_rows, batch_size, num_proc, heavy)

        def do_pass():
            if pooled:
                return self._pool_map(ds, run, batch_size, num_proc, chunk, map_kwargs, stage.label)
            return ds.map(run, batched=True, batch_size=batch_size, num_proc=num_proc, desc=stage.label[:80],
                          **map_kwargs)

        out, folder = self._spilling(run, do_pass)
        if folder is not None:
            self._record_spilled(stage, out, folder, map_kwargs)
        return self._ledger_failed(stage, out)

    @staticmethod
    def _pass_shape(n_rows: int, batch_size: int, num_proc: int, heavy: bool):
        """(on our pool?, rows a worker takes at a time, batch size, processes for ``map``: None for one)."""
        chunk = hf_pool.chunk_rows_for(n_rows, batch_size, num_proc, heavy)
        pooled = hf_pool.enabled() and num_proc > 1 and n_rows > chunk
        if not pooled:
            if heavy and 1 < num_proc <= n_rows <= batch_size:
                batch_size = -(-n_rows // num_proc)  # one batch per worker (media rows cost seconds each)
            num_proc = num_proc if num_proc > 1 and n_rows > batch_size else None
        return pooled, chunk, batch_size, num_proc

    def _spilling(self, run, do_pass):
        """``do_pass()`` with the run's folder for failed rows set (``skip_op_error``): (its result, the folder
        or None). The folder is removed when ``do_pass`` raises."""
        from data_juicer.core.runner import FusedRun

        if not (isinstance(run, FusedRun) and self.recipe.skip_op_error):
            return do_pass(), None
        import shutil
        import uuid

        folder = run.spill_dir = os.path.join(self.job.dir, "tmp", f"failed-rows-{uuid.uuid4().hex[:12]}")
        try:
            out = do_pass()
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            run.spill_dir = None
        return out, folder

    def _ledger_failed(self, stage, out):
        """``out`` without the rows a pass marked failed (``Fields.error``), which go to the ledger, and
        without that column."""
        if Fields.error not in out.column_names:
            return out
        import numpy as np
        import pyarrow.compute as pc

        failed = pc.greater(pc.utf8_length(out.data.column(Fields.error)), 0)
        n_failed = pc.sum(failed).as_py() or 0
        if n_failed:
            mask = failed.to_numpy(zero_copy_only=False)
            bad = np.flatnonzero(mask)
            rows = out.take_table(bad).to_pylist() if isinstance(out, ArrowRows) else out.select(bad)
            self.ledger.record(dict(json.loads(r[Fields.error]), sample=r) for r in rows)
            logger.warning(f"[{stage.label}] {n_failed} samples failed and went to {self.ledger.path}")
            out = out.select(np.flatnonzero(~mask))
        return out.remove_columns([Fields.error])

    def _lean_pass(self, stage, ds, run, batch_size: int, num_proc: int, heavy: bool):
        """The pass over ``ArrowRows`` without ``datasets`` (``lean_pass``); None when it declines (the
        ``datasets`` path then runs it, from the start)."""
        from data_juicer.core.backends import lean_pass

        fp, folder = None, None
        if self.recipe.use_cache:
            from data_juicer.core.cache import stage_fingerprint

            base = lean_pass.input_fingerprint(ds)
            folder = lean_pass.cache_folder(ds)
            if base and folder:
                fp = stage_fingerprint(base, stage.ops, {"skip_op_error": self.recipe.skip_op_error,
                                                         "stats_order": run.stats_order})
        pooled, chunk, batch_size, num_proc = self._pass_shape(ds.num_rows, batch_size, num_proc, heavy)
        if not pooled:  # one chunk, in this process
            num_proc, chunk = 1, max(1, ds.num_rows)

        def do_pass():
            return lean_pass.pool_map(ds, run, batch_size=batch_size, num_proc=num_proc, chunk_rows=chunk,
                                      fingerprint=fp, cache_dir=folder, tmp_parent=os.path.join(self.job.dir, "tmp"),
                                      desc=stage.label)

        try:
            out, spill_folder = self._spilling(run, do_pass)
        except lean_pass.Decline as e:
            logger.info(f"[{stage.label[:60]}] runs on the datasets path ({e})")
            counts = getattr(run, "counter_path", None)
            if counts and os.path.isdir(counts):  # the counts of the batches done so far would count twice
                for name in os.listdir(counts):
                    os.remove(os.path.join(counts, name))
            return None
        if spill_folder is not None:
            self._record_spilled(stage, out, spill_folder, {"new_fingerprint": fp} if fp else {})
        return self._ledger_failed(stage, out)

    @staticmethod
    def _pool_map(ds, fn, batch_size: int, num_proc: int, chunk: int, map_kwargs: dict, label: str,
                  remove_columns=()):
        """``ds.map(fn, batched, num_proc)`` on our forked pool (``hf_pool``), with the pass cache of
        ``map_kwargs`` (its files beside the input's cache files)."""
        fp = map_kwargs.get("new_fingerprint")
        files = getattr(ds, "cache_files", None)
        cache_dir = os.path.dirname(files[0]["filename"]) if fp and files else None
        return hf_pool.pool_map(ds, fn, batch_size=batch_size, num_proc=num_proc, chunk_rows=chunk,
                                fingerprint=fp if cache_dir else None, cache_dir=cache_dir,
                                load_from_cache_file=map_kwargs.get("load_from_cache_file", True),
                                remove_columns=remove_columns, desc=label[:80])

    def _record_spilled(self, stage, out, folder: str, map_kwargs: dict) -> None:
        """Ledger the failed rows a pass's workers spilled (a worker's first batches that failed
        wholly). With the pass cache they are kept beside the cached result, so a rerun that loads
        the pass from the cache records them again, as it does the failed rows inside the result."""
        import pickle
        import shutil

        from data_juicer.core.runner import read_spill

        ran = os.path.isdir(folder)
        rows = read_spill(folder) if ran else []
        shutil.rmtree(folder, ignore_errors=True)
        keep = None
        files = getattr(out, "cache_files", None)
        out_folder = os.path.dirname(files[0]["filename"]) if files else getattr(out, "folder", None)
        if map_kwargs.get("new_fingerprint") and out_folder:
            keep = os.path.join(out_folder, f"{map_kwargs['new_fingerprint']}.failed-rows.pkl")
            if ran:
                tmp = keep + ".tmp"
                with open(tmp, "wb") as f:
                    pickle.dump(rows, f, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, keep)
            elif os.path.exists(keep):
                with open(keep, "rb") as f:
                    rows = pickle.load(f)
        if rows:
            self.ledger.record(dict(json.loads(r[Fields.error]), sample=r) for r in rows)
            logger.warning(f"[{stage.label}] {len(rows)} samples failed and went to {self.ledger.path}")

    def _hash_only(self, ops: list, ds, cols: list):
        """Read just the hash inputs and keep the hashes beside the data for the dedups (no rewrite
        of every column); with merged hashing, ``ops`` are consecutive dedups hashed in this one pass.
        None when the shortcut fails (then the normal pass isolates the failure)."""

        def hash_batch(samples):
            out = dict(samples)
            for op in ops:
                out = op.compute_hash(out)
            return {k: v for k, v in out.items() if k not in cols}

        batch_size = min(op.batch_size for op in ops)
        names = " + ".join(op.name for op in ops)
        if all(callable(getattr(op, "hash_table", None)) for op in ops):
            # the ops hash an Arrow table themselves, in threads of this process: no worker processes,
            # no datasets.map (its Python rows and writer), only the hash columns held
            try:
                table = ds.select_columns(cols).data.table
                indices = _row_numbers(ds)
                extra = {}
                for op in ops:
                    extra.update(op.hash_table(table, num_threads=self.np, indices=indices))
            except Exception as e:  # noqa: BLE001 - the pass below hashes, or isolates the failure
                logger.info(f"[{names}] threaded hashing not used ({type(e).__name__}: {e})")
            else:
                self._pending_extra, self._extra_uses = extra, len(ops)
                return ds
        num_proc = self.np if self.np > 1 and ds.num_rows > batch_size else None
        if isinstance(ds, ArrowRows):  # the same pass without ``datasets`` (``lean_pass``), else the one below
            from data_juicer.core.backends import lean_pass

            try:
                hashes = lean_pass.pool_map(ds.select_columns(cols), hash_batch, batch_size=batch_size,
                                            num_proc=num_proc or 1,
                                            chunk_rows=batch_size if num_proc else max(1, ds.num_rows),
                                            fingerprint=None, cache_dir=None,
                                            tmp_parent=os.path.join(self.job.dir, "tmp"), remove_columns=cols,
                                            desc=f"{names} (hashing)")
            except lean_pass.Decline as e:
                logger.info(f"[{names}] hashing runs on the datasets path ({e})")
            except Exception as e:
                logger.info(f"[{names}] hashing shortcut not used ({type(e).__name__}: {e})")
                return None
            else:
                self._pending_extra = {c: hashes.column(c) for c in hashes.column_names}
                self._extra_uses = len(ops)
                return ds
        ds = self._hf(ds)
        try:
            if num_proc and hf_pool.enabled():
                hashes = self._pool_map(ds.select_columns(cols), hash_batch, batch_size, num_proc, batch_size, {},
                                        f"{names} (hashing)", remove_columns=cols)
            else:
                hashes = ds.select_columns(cols).map(hash_batch, batched=True, batch_size=batch_size,
                                                     num_proc=num_proc, remove_columns=cols,
                                                     desc=f"{names} (hashing)")
        except Exception as e:
            logger.info(f"[{names}] hashing shortcut not used ({type(e).__name__}: {e})")
            return None
        self._pending_extra = {c: hashes.data.column(c) for c in hashes.column_names}
        self._extra_uses = len(ops)
        return ds

    def _cache_kwargs(self, stage, ds, run) -> dict:
        """A stable fingerprint for the pass, so a rerun loads it from the datasets cache."""
        files = getattr(ds, "cache_files", None)
        if not self.recipe.use_cache or not files or run.tracer is not None:
            return {}
        from data_juicer.core.cache import restore, stage_fingerprint

        fp = stage_fingerprint(ds._fingerprint, stage.ops,
                               {"skip_op_error": self.recipe.skip_op_error, "stats_order": run.stats_order})
        restored = restore(os.path.dirname(files[0]["filename"]), fp, self.recipe.cache_compress)
        if restored:
            logger.info(f"cache_compress: {restored} cache file(s) of [{stage.label[:60]}] decompressed for reuse")
        return {"new_fingerprint": fp, "load_from_cache_file": True}

    def after_stage(self, before, after) -> None:
        """``cache_compress``: compress the pass files of ``before`` that ``after`` does not read. And
        give Arrow's allocator's free pages back (a dedup's hashes, a pass's buffers), so they do not
        add to the peak of the stages after it (the export above all)."""
        from data_juicer.core.loader import _release_arrow_memory

        _release_arrow_memory()
        algo = self.recipe.cache_compress
        if not algo or before is None or not self.recipe.use_cache:
            return
        from data_juicer.core.cache import compress, pass_files

        still_read = set(pass_files(after)) if after is not None else set()
        compress([f for f in pass_files(before) if f not in still_read], algo)

    def run_global(self, op, ds, show_num: int = 0):
        wrapped = DJDataset(ds, self._pending_extra, ledger=self.ledger)
        uses, self._pending_extra, self._extra_uses = self._extra_uses, None, 0
        pairs = None
        if isinstance(op, Deduplicator):
            result, pairs = op.process(wrapped, show_num=show_num)
        else:
            result = op.process(wrapped)
        if uses > 1 and isinstance(result, DJDataset):
            # merged hashing: the next dedups' hashes, taken along with the rows this one kept
            extra = getattr(result, "_extra", None)
            if extra:
                self._pending_extra, self._extra_uses = dict(extra), uses - 1
        return (result.hf if isinstance(result, DJDataset) else self._hf(result)), pairs

    can_stream = True

    def run_streamed(self, op, ds, stage, run, batch_size: int):
        import datasets

        from data_juicer.utils.batch import iter_rows, rows_to_batch

        ds = self._hf(ds)
        wrapped = DJDataset(ds, self._pending_extra, ledger=self.ledger)
        self._pending_extra, self._extra_uses = None, 0
        kept, bad, n_mid, unordered = [], [], 0, 0
        for burst in op.iter_bursts(wrapped):
            todo = [(i, r) for i, rows in burst for r in rows]
            n_mid += len(todo)
            for start in range(0, len(todo), batch_size):
                chunk = todo[start:start + batch_size]
                out = run(rows_to_batch([dict(r, **{_ORDER: i}) for i, r in chunk]))
                for r in iter_rows(out):
                    if r.get(Fields.error):
                        r.pop(_ORDER, None)
                        bad.append(r)
                        continue
                    r.pop(Fields.error, None)
                    i = r.pop(_ORDER, None)
                    if i is None:  # an op dropped the column: this row keeps its arrival place
                        unordered += 1
                        i = kept[-1][0] if kept else 0
                    kept.append((i, r))
        if unordered:
            logger.warning(f"[{stage.label[:80]}] {unordered} rows lost their sample order in the streamed pass "
                           f"after {op.name}; they follow the rows that arrived before them")
        if bad:
            self.ledger.record(dict(json.loads(r[Fields.error]), sample=r) for r in bad)
            logger.warning(f"[{stage.label}] {len(bad)} samples failed and went to {self.ledger.path}")
        kept.sort(key=lambda x: x[0])  # stable: a sample's rows keep their order
        if not kept:
            return ds.select([]), n_mid
        return datasets.Dataset.from_list([r for _, r in kept]), n_mid

    # -- checkpoint store ------------------------------------------------------------------
    def save(self, ds, folder: str):
        ds = self._hf(ds)
        if ds._indices is not None:
            ds = ds.flatten_indices()
        ds.save_to_disk(folder)
        return ds

    def restore(self, folder: str):
        import datasets

        return datasets.load_from_disk(folder)

    # -- export ----------------------------------------------------------------------------
    def export(self, ds, exporter):
        return exporter.export(_decoded_json_columns(ds), _row_numbers(ds))


def _background_import(name: str):
    """A started daemon thread importing module ``name`` (join it before forking); a missing module is
    left alone."""
    import importlib
    import threading

    def run():
        try:
            importlib.import_module(name)
        except ImportError:
            pass

    t = threading.Thread(target=run, name=f"import-{name}", daemon=True)
    t.start()
    return t


def _row_numbers(ds):
    """The pending row selection as numpy row numbers (None: none); of an ``ArrowRows`` read from the
    buffers (Arrow's ``to_numpy`` imports pandas)."""
    if ds._indices is None:
        return None
    if isinstance(ds, ArrowRows):
        from data_juicer.core.dataset import to_numpy

        return to_numpy(ds._indices.column(0))
    return ds._indices.column(0).to_numpy()


def _drop_mapped_text(ds) -> None:
    """Hand back the pages of the memory-mapped text the load touched (minhash's request: ~100 MB of the
    Arrow file stayed resident in the driver, and the first pass's start was the run's RSS peak). Only
    the resident set changes (a page is read again from the file when needed); a no-op in memory."""
    try:
        from data_juicer.core.exporter import _mapped_text

        for _, m in _mapped_text(ds.data.table):
            m.drop_all()
    except Exception:  # noqa: BLE001 - only a memory figure
        pass


ROW_INDEX_BATCH = 1 << 18  # rows a record batch of the row-index file (2 MB of int64)


def _add_row_index(ds):
    """``ds`` with the row-index column 0..n-1 (int64, as ``add_column`` infers from a list of ints),
    fingerprinted from the input's fingerprint (same for the same input, so the pass cache of a rerun is
    found) instead of ``datasets`` hashing a list of n ints (~0.14 CPU s at 50,000). The column is
    memory-mapped from a file beside the input's cache file (``_row_index_file``), so it is page cache, not
    the driver's heap: in memory it was 16 MB of anonymous memory at 2M rows, which every forked pass
    worker counted again (copy-on-write pages). An input in memory, or with a row selection, gets the
    column in memory, as before."""
    import hashlib

    import numpy as np
    import pyarrow as pa

    n = ds.num_rows
    if not n:  # an empty list gives a null column
        return ds.add_column(Fields.row_index, [])
    fp = hashlib.sha256(f"{ds._fingerprint}:{Fields.row_index}:{n}".encode()).hexdigest()[:16]
    path = _row_index_file(ds, n)
    if path is None:
        return ds.add_column(Fields.row_index, pa.array(np.arange(n, dtype=np.int64)), new_fingerprint=fp)
    import datasets
    from datasets.arrow_dataset import update_metadata_with_features
    from datasets.table import MemoryMappedTable, concat_tables

    column_table = MemoryMappedTable.from_file(path)
    # what ``Dataset.add_column`` does with an in-memory column table
    table = concat_tables([ds._data, column_table], axis=1)
    info = ds.info.copy()
    info.features.update(datasets.Features.from_arrow_schema(column_table.schema))
    table = update_metadata_with_features(table, info.features)
    return datasets.Dataset(table, info=info, split=ds.split, indices_table=None, fingerprint=fp)


def _row_index_file(ds, n: int) -> Optional[str]:
    """An Arrow stream file of one int64 column ``Fields.row_index`` holding 0..n-1, in record batches of
    ``ROW_INDEX_BATCH`` rows, named ``dj-row-index-<n>.arrow`` beside ``ds``'s first cache file (written
    once, atomically; any dataset of n rows there shares it). None where ``ds`` has no cache file, has a
    row selection (``add_column`` flattens it first), or the folder cannot be written."""
    files = getattr(ds, "cache_files", None)
    if ds._indices is not None or not files or Fields.row_index in ds.column_names:
        return None
    return _row_index_path(os.path.dirname(files[0]["filename"]), n)


def _add_lean_row_index(ds: ArrowRows) -> ArrowRows:
    """``_add_row_index`` for the lean load: the column memory-mapped from the same ``dj-row-index-<n>.arrow``
    beside the Arrow stream file the rows are mapped from, so the pass workers share its pages; in memory
    where the rows are (a small input), or the folder cannot be written."""
    import numpy as np
    import pyarrow as pa

    n = ds.num_rows
    path = _row_index_path(os.path.dirname(ds.path), n) if ds.path and ds._indices is None else None
    if path is None:
        return ds.append_column(Fields.row_index, numpy_array(np.arange(n, dtype=np.int64)))
    return ds.append_column(Fields.row_index, pa.ipc.open_stream(pa.memory_map(path)).read_all().column(0))


def _row_index_path(folder: str, n: int) -> Optional[str]:
    """``folder/dj-row-index-<n>.arrow`` (``_row_index_file``), written if it is not there; None if it cannot be."""
    import numpy as np
    import pyarrow as pa

    path = os.path.join(folder, f"dj-row-index-{n}.arrow")
    if os.path.exists(path):
        return path
    tmp = f"{path}.tmp-{os.getpid()}"
    schema = pa.schema([(Fields.row_index, pa.int64())])
    try:
        with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
            for lo in range(0, n, ROW_INDEX_BATCH):
                values = np.arange(lo, min(n, lo + ROW_INDEX_BATCH), dtype=np.int64)
                writer.write_batch(pa.record_batch([numpy_array(values)], schema=schema))  # (no pandas import)
        os.replace(tmp, path)
    except OSError:
        return None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def _decoded_json_columns(ds):
    """The dataset's table with values that ``datasets`` stored as its ``Json`` type (JSON text, used
    for dicts it cannot type, e.g. all empty or with differing keys), at any depth, turned back into
    values, so they export as objects, as on Ray; a column Arrow cannot type stays as it is."""
    import json

    import pyarrow as pa

    table = ds.data.table
    if isinstance(ds, ArrowRows):  # pyarrow's JSON reader makes no Json columns (``_lean_table_ok``)
        return table
    json_type = getattr(__import__("datasets").features, "Json", None)
    if json_type is None:
        return table

    def has_json(feature) -> bool:
        if isinstance(feature, json_type):
            return True
        if isinstance(feature, dict):
            return any(has_json(f) for f in feature.values())
        inner = getattr(feature, "feature", None)
        return inner is not None and has_json(inner)

    def decode(value, feature):
        if value is None:
            return None
        if isinstance(feature, json_type):
            return json.loads(value) if isinstance(value, str) else value
        if isinstance(feature, dict) and isinstance(value, dict):
            return {k: decode(v, feature[k]) if k in feature else v for k, v in value.items()}
        inner = getattr(feature, "feature", None)
        if inner is not None and isinstance(value, list):
            return [decode(v, inner) for v in value]
        return value

    for name, feature in ds.features.items():
        if not has_json(feature):
            continue
        i = table.schema.get_field_index(name)
        try:
            values = pa.array([decode(v, feature) for v in table.column(i).to_pylist()])
        except (pa.ArrowException, TypeError, ValueError):
            continue
        table = table.set_column(i, name, values)
    return table
