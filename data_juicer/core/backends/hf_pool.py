"""Our own forked worker pool for the row-wise passes of the Hugging Face backend.

``datasets.Dataset.map(num_proc=n)`` cuts the dataset into ``n`` contiguous shards, starts a
``multiprocess`` pool and a Manager process, pickles the function to each worker and polls a
Manager queue for progress every 50 ms. On two cores that costs CPU and wall time in every pass,
and contiguous shards balance badly when rows differ in cost (images, videos): one worker idles
while the other finishes its half.

``pool_map`` forks its ``num_proc`` workers once per pass. They inherit the memory-mapped Arrow
dataset and the function (no pickling), take chunks of rows from a shared counter as they become
free (so uneven rows balance), and write each chunk's output as an Arrow file with ``datasets``'
own ``ArrowWriter``, starting from the input's features, as ``map`` does. The driver waits on the
workers' pipes (no polling), and assembles the chunk files in row order. The result is the same
``datasets.Dataset`` ``map`` would give: same columns in the same order, same types, same rows.

Cache: with a fingerprint, the chunk files are ``cache-<fingerprint>_pool_<i>_of_<n>.arrow`` in the
input's cache folder, and ``cache-<fingerprint>_pool.json`` lists them once all are written; a rerun
with the same fingerprint loads them from there (``load_from_cache_file``). Without one, the files go to
``datasets``' temporary cache folder (removed when the process ends), as ``map``'s do.

A worker that raises sends the exception to the driver, which stops the other workers and raises it
(the pass fails as it does with ``map``; per-sample failures are contained inside the function, by
``FusedRun``). ``DJ_HF_POOL=0`` in the environment turns the pool off (``map`` is used).
"""

from __future__ import annotations

import json
import os
import pickle
import traceback
from typing import Callable, Optional, Sequence

from loguru import logger

ENV_SWITCH = "DJ_HF_POOL"


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def chunk_rows_for(num_rows: int, batch_size: int, num_proc: int, heavy: bool) -> int:
    """Rows a worker takes at a time: whole batches for text (few files, the batches ``map`` would
    make); for media passes small chunks (a row costs up to seconds), at least 8 per worker."""
    if heavy:
        return max(1, min(batch_size, -(-num_rows // (num_proc * 8))))
    return max(1, batch_size)


def _marker(folder: str, fingerprint: str) -> str:
    return os.path.join(folder, f"cache-{fingerprint}_pool.json")


def _chunk_path(folder: str, fingerprint: str, i: int, n: int) -> str:
    return os.path.join(folder, f"cache-{fingerprint}_pool_{i:05d}_of_{n:05d}.arrow")


def load_cached(folder: str, fingerprint: str):
    """The pass's result from an earlier run (None when not all of it is there)."""
    path = _marker(folder, fingerprint)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            files = [os.path.join(folder, name) for name in json.load(f)["files"]]
    except (OSError, ValueError, KeyError):
        return None
    if not files or not all(os.path.exists(p) for p in files):
        return None
    return _assemble(files, fingerprint)


def _assemble(files: Sequence[str], fingerprint: Optional[str]):
    """The chunk files as one dataset, in order. When every file has the first one's schema (the usual
    case), their memory-mapped tables are concatenated and wrapped once: the same dataset
    ``concatenate_datasets`` of ``Dataset.from_file`` parts gives (same table, features, info, cache
    files), without a fingerprint hashed per part and for the concatenation (~0.45 CPU s for the 50
    chunks of a 50,000-row pass). Chunks whose types differ (a stat all None in one of them) are
    aligned by ``concatenate_datasets`` as before."""
    import datasets
    from datasets.fingerprint import generate_random_fingerprint
    from datasets.table import MemoryMappedTable, concat_tables

    tables = [MemoryMappedTable.from_file(p) for p in files]
    first = tables[0].schema
    if all(t.schema.equals(first, check_metadata=True) for t in tables[1:]):
        table = tables[0] if len(tables) == 1 else concat_tables(tables)
        return datasets.Dataset(table, fingerprint=fingerprint or generate_random_fingerprint())
    parts = [datasets.Dataset.from_file(p) for p in files]
    out = parts[0] if len(parts) == 1 else datasets.concatenate_datasets(parts)
    if fingerprint:
        out._fingerprint = fingerprint
    return out


def _write_chunk(arrow_ds, fn, formatter, features, start: int, stop: int, batch_size: int,
                 remove_columns: Sequence[str], path: str) -> int:
    """Run ``fn`` over rows [start, stop) batch by batch and write the output as one Arrow file
    (what ``Dataset._map_single`` does for a shard). Returns the rows written."""
    from datasets.arrow_writer import ArrowWriter
    from datasets.formatting import format_table
    from datasets.formatting.formatting import LazyDict

    tmp = path + f".tmp{os.getpid()}"
    writer = ArrowWriter(features=features, path=tmp, writer_batch_size=1000, update_features=True)
    try:
        for a in range(start, stop, batch_size):
            pa_inputs = arrow_ds[a:min(a + batch_size, stop)]
            inputs = format_table(pa_inputs, range(pa_inputs.num_rows), formatter=formatter)
            processed = fn(inputs)
            # as map: the input's columns (those the function never read stay Arrow), then its output
            if isinstance(inputs, LazyDict):
                merged = {k: (v if k not in inputs.keys_to_format else pa_inputs[k]) for k, v in inputs.data.items()}
            else:
                merged = dict(inputs)
            lazy_out = isinstance(processed, LazyDict)
            if lazy_out:
                processed = {k: v for k, v in processed.data.items() if k not in processed.keys_to_format}
            for c in remove_columns:
                merged.pop(c, None)
                if lazy_out:
                    processed.pop(c, None)
            merged.update(processed)
            writer.write_batch(merged)
        n, _ = writer.finalize()
    finally:
        writer.close()
    os.replace(tmp, path)
    return n


def _worker(conn, counter, lock, n_chunks: int, chunk: int, num_rows: int, job: tuple) -> None:
    import struct

    arrow_ds, fn, formatter, features, batch_size, remove_columns, folder, fingerprint = job
    try:
        while True:
            with lock:  # the next chunk: a counter in memory shared with the other workers
                i = struct.unpack_from("q", counter, 0)[0]
                struct.pack_into("q", counter, 0, i + 1)
            if i >= n_chunks:
                break
            start = i * chunk
            stop = min(start + chunk, num_rows)
            path = _chunk_path(folder, fingerprint, i, n_chunks)
            n = _write_chunk(arrow_ds, fn, formatter, features, start, stop, batch_size, remove_columns, path)
            conn.send(("done", i, n, stop - start))
        conn.send(("exit",))
    except BaseException as e:  # the driver re-raises it
        tb = traceback.format_exc()
        try:
            payload = pickle.dumps(e)
        except Exception:
            payload = None
        try:
            conn.send(("error", payload, tb))
        except Exception:
            pass
    finally:
        conn.close()


class WorkerError(RuntimeError):
    """A pool worker died or raised an exception that could not be sent back as it was."""


def _shed_memory() -> None:
    """Hand freed memory back to the system before the workers fork: Python's garbage, the blocks Arrow's
    allocator keeps after a load or a global step, and glibc's free lists. A forked worker starts with
    the driver's whole heap mapped (copy-on-write), so this is memory each worker would otherwise hold
    for the pass: at 2M documents the driver was ~100 MB larger at the fork than at 50k."""
    import gc

    gc.collect()
    try:
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    except Exception:  # noqa: BLE001 - an allocator without it
        pass
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def pool_map(ds, fn: Callable[[dict], dict], *, batch_size: int, num_proc: int, chunk_rows: Optional[int] = None,
             fingerprint: Optional[str] = None, cache_dir: Optional[str] = None, load_from_cache_file: bool = True,
             remove_columns: Sequence[str] = (), desc: str = ""):
    """``ds.map(fn, batched=True, batch_size=batch_size, num_proc=num_proc, remove_columns=...)`` on
    our forked workers (module docstring). ``cache_dir``: where the chunk files go with a
    ``fingerprint`` (the input's cache folder); without it, ``datasets``' temporary cache folder."""
    import mmap
    import multiprocessing as mp
    import uuid
    from multiprocessing.connection import wait

    from datasets.formatting import get_formatter

    if fingerprint and cache_dir and load_from_cache_file:
        cached = load_cached(cache_dir, fingerprint)
        if cached is not None:
            logger.info(f"[{desc[:60]}] loaded from the cache ({fingerprint})")
            return cached
    persistent = bool(fingerprint and cache_dir)
    if persistent:
        folder = cache_dir
        os.makedirs(folder, exist_ok=True)
    else:
        from datasets.fingerprint import get_temporary_cache_files_directory

        folder = get_temporary_cache_files_directory()
    tag = fingerprint if persistent else f"tmp{uuid.uuid4().hex[:16]}"
    num_rows = ds.num_rows
    chunk = max(1, chunk_rows or batch_size)
    n_chunks = max(1, -(-num_rows // chunk))
    num_proc = max(1, min(num_proc, n_chunks))
    batch_size = max(1, min(batch_size, chunk))
    arrow_ds = ds.with_format("arrow")
    format_kwargs = dict(ds._format_kwargs or {})
    if ds._format_type is None:
        format_kwargs["lazy"] = True  # as map: columns the function does not read are not converted
    formatter = get_formatter(ds._format_type, features=ds.features, **format_kwargs)
    job = (arrow_ds, fn, formatter, ds.features, batch_size, tuple(remove_columns), folder, tag)

    _shed_memory()  # what the driver frees before the fork is not inherited by (nor counted in) each worker
    ctx = mp.get_context("fork")
    # anonymous shared memory (no file descriptor stays open, unlike multiprocessing.Value's heap)
    counter = mmap.mmap(-1, 8)
    lock = ctx.Lock()
    procs, conns = [], []
    for _ in range(num_proc):
        r, w = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_worker, args=(w, counter, lock, n_chunks, chunk, num_rows, job), daemon=True)
        p.start()
        w.close()
        procs.append(p)
        conns.append(r)
    rows_out: dict[int, int] = {}
    bar = _progress(num_rows, desc)
    error = None
    live = dict(zip(conns, procs))
    try:
        while live and error is None:
            for c in wait(list(live)):
                try:
                    msg = c.recv()
                except EOFError:
                    p = live.pop(c)
                    p.join()
                    if p.exitcode:
                        error = WorkerError(f"a worker of [{desc[:60]}] ended with exit code {p.exitcode} "
                                            f"(killed or out of memory?)")
                    continue
                if msg[0] == "done":
                    rows_out[msg[1]] = msg[2]
                    if bar is not None:
                        bar.update(msg[3])
                elif msg[0] == "error":
                    exc = pickle.loads(msg[1]) if msg[1] is not None else None
                    if not isinstance(exc, BaseException):
                        exc = WorkerError(f"a worker of [{desc[:60]}] failed:\n{msg[2]}")
                    error = exc
                    break
    finally:
        if bar is not None:
            bar.close()
        for p in procs:
            if error is not None and p.is_alive():
                p.terminate()
            p.join()
        for c in conns:
            c.close()
        counter.close()
    if error is None and len(rows_out) < n_chunks:
        error = WorkerError(f"[{desc[:60]}]: {n_chunks - len(rows_out)} of {n_chunks} chunks were not written")
    paths = [_chunk_path(folder, tag, i, n_chunks) for i in range(n_chunks)]
    if error is not None:
        for p in paths:
            for q in (p, *(p + f".tmp{x.pid}" for x in procs)):
                if os.path.exists(q):
                    os.remove(q)
        raise error
    # chunks that kept no row add nothing (and their inferred types would be guesses); one stays if all are empty
    keep = [p for i, p in enumerate(paths) if rows_out[i]] or paths[:1]
    for p in paths:
        if p not in keep:
            os.remove(p)
    out = _assemble(keep, fingerprint)
    if persistent:
        tmp = _marker(folder, tag) + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"files": [os.path.basename(p) for p in keep], "rows": out.num_rows}, f)
        os.replace(tmp, _marker(folder, tag))
    return out


def _progress(total: int, desc: str):
    """A tqdm bar fed by finished chunks, where ``datasets`` shows its bars."""
    try:
        from datasets.utils import are_progress_bars_disabled
        from datasets.utils.tqdm import tqdm
    except ImportError:
        return None
    if are_progress_bars_disabled():
        return None
    return tqdm(total=total, desc=desc[:80] or None, unit=" examples")
