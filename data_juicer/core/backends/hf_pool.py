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
A worker that has processed ``DJ_HF_POOL_WORKER_ROWS`` rows (default 25,000) exits after its chunk and
the driver forks a fresh one, so a worker's memory does not grow with the size of the dataset.

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
# A worker that has processed this many rows exits before taking another chunk, and the driver forks a
# fresh one (as multiprocessing's ``maxtasksperchild``): what a worker builds up while it runs (a line cache
# filling towards its bound, freed heap the allocator keeps) then reaches the same level at every dataset
# size instead of growing with the rows a worker sees (50k documents: 25k a worker; 2M: 1M).
ENV_WORKER_ROWS = "DJ_HF_POOL_WORKER_ROWS"
DEFAULT_WORKER_ROWS = 25_000


def worker_rows() -> int:
    """Rows a pool worker processes before it is replaced (``DJ_HF_POOL_WORKER_ROWS``; 0: never)."""
    raw = os.environ.get(ENV_WORKER_ROWS, "").strip()
    if not raw:
        return DEFAULT_WORKER_ROWS
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{ENV_WORKER_ROWS}={raw!r}: expected a whole number of rows (0: never replace a worker)")
    if value < 0:
        raise ValueError(f"{ENV_WORKER_ROWS}={raw!r}: expected 0 (never replace a worker) or a positive number of rows")
    return value


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


def listed_files(marker: str) -> Optional[list[str]]:
    """The chunk files a pass's listing ``marker`` names, beside it (None: no listing, or a file gone)."""
    if not os.path.exists(marker):
        return None
    try:
        with open(marker, encoding="utf-8") as f:
            files = [os.path.join(os.path.dirname(marker), name) for name in json.load(f)["files"]]
    except (OSError, ValueError, KeyError):
        return None
    if not files or not all(os.path.exists(p) for p in files):
        return None
    return files


def write_listing(marker: str, files: Sequence[str], rows: int) -> None:
    """List a finished pass's chunk files in ``marker`` (atomically: a rerun finds all of them or none)."""
    tmp = marker + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"files": [os.path.basename(p) for p in files], "rows": rows}, f)
    os.replace(tmp, marker)


def drop_empty_chunks(paths: Sequence[str], rows_out: dict) -> list[str]:
    """The chunk files that kept rows (one stays if none did: the pass's schema), the others removed:
    they add nothing, and their inferred types would be guesses."""
    keep = [p for i, p in enumerate(paths) if rows_out[i]] or list(paths[:1])
    for p in paths:
        if p not in keep:
            os.remove(p)
    return keep


def from_cache(load: Callable, cache_dir: Optional[str], fingerprint: Optional[str], load_from_cache_file: bool,
               desc: str):
    """``load(cache_dir, fingerprint)``, the pass's result from an earlier run, where there is a cache to
    look in (None: run the pass)."""
    if not (fingerprint and cache_dir and load_from_cache_file):
        return None
    cached = load(cache_dir, fingerprint)
    if cached is not None:
        logger.info(f"[{desc[:60]}] loaded from the cache ({fingerprint})")
    return cached


def load_cached(folder: str, fingerprint: str):
    """The pass's result from an earlier run (None when not all of it is there)."""
    files = listed_files(_marker(folder, fingerprint))
    return _assemble(files, fingerprint) if files else None


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


def _worker(conn, counter, lock, n_chunks: int, chunk: int, num_rows: int, write: Callable[[int, int, int], int],
            max_rows: int = 0) -> None:
    import struct

    from data_juicer.utils.forking import child_default_sigterm

    child_default_sigterm()  # forked under sigterm_held: a SIGTERM sent meanwhile ends it here
    done = 0
    try:
        while not (max_rows and done >= max_rows):  # past its budget: exit, the driver forks a fresh worker
            with lock:  # the next chunk: a counter in memory shared with the other workers
                i = struct.unpack_from("q", counter, 0)[0]
                struct.pack_into("q", counter, 0, i + 1)
            if i >= n_chunks:
                break
            start = i * chunk
            stop = min(start + chunk, num_rows)
            n = write(i, start, stop)
            conn.send(("done", i, n, stop - start))
            done += stop - start
        conn.send(("exit", bool(max_rows and done >= max_rows)))
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


_MADV_NOHUGEPAGE = 15  # linux/mman.h


def _no_huge_pages() -> int:
    """``madvise(MADV_NOHUGEPAGE)`` on this process's anonymous regions that asked for transparent huge
    pages (``hg`` in ``/proc/self/smaps``: Arrow's mimalloc arenas, numpy's large arrays). With THP in
    ``madvise`` mode, khugepaged keeps collapsing such a region's pages into 2 MB pages, the free ones
    between them included, so the RSS of a process that allocates nothing (the driver waiting on its
    workers) creeps up through a long pass, and each fork inherits the flag. Returns the bytes advised
    (0 where there is no smaps or no libc)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        with open("/proc/self/smaps", encoding="ascii", errors="replace") as f:
            lines = f.read().splitlines()
    except (OSError, AttributeError):
        return 0
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    done, region = 0, None
    for line in lines:
        head = line.split(" ", 1)[0]
        if "-" in head and not head.endswith(":"):
            parts = line.split()
            private_anon = parts[1] == "rw-p" and (len(parts) == 5 or parts[5] == "[heap]")
            region = parts if private_anon else None
        elif region is not None and line.startswith("VmFlags:") and " hg" in line:
            lo, hi = (int(x, 16) for x in region[0].split("-"))
            if libc.madvise(lo, hi - lo, _MADV_NOHUGEPAGE) == 0:
                done += hi - lo
            region = None
    return done


# A driver below both of these has nothing worth shedding before the fork (``_needs_shed``).
SHED_MIN_DATA_BYTES = 8 << 20
SHED_MIN_ANON_BYTES = 160 << 20


def _anon_rss() -> Optional[int]:
    """This process's anonymous resident memory (``RssAnon`` of ``/proc/self/status``), None where unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _needs_shed(data_bytes: int) -> bool:
    """Whether ``_shed_memory`` can hand back anything before this fork: not when the pass's input is
    small (under ``SHED_MIN_DATA_BYTES``, so its load left few blocks behind) and the driver's anonymous
    memory is under ``SHED_MIN_ANON_BYTES`` (a driver with ``datasets``, pandas and OpenCV loaded holds
    ~105 MB; the 300-image recipe's driver: 104.2 MB before the shed, 105.5 MB after it, for 0.08-0.09 s
    of serial time - ``gc.collect()`` over ~130k objects and the ``smaps`` walk - before the workers
    start). A large input or a grown driver (a global step, 2M documents) is always shed."""
    if data_bytes >= SHED_MIN_DATA_BYTES:
        return True
    anon = _anon_rss()
    return anon is None or anon >= SHED_MIN_ANON_BYTES


def _shed_memory() -> None:
    """Hand freed memory back to the system before the workers fork: Python's garbage, the blocks Arrow's
    allocator keeps after a load or a global step, and glibc's free lists. A forked worker starts with
    the driver's whole heap mapped (copy-on-write), so this is memory each worker would otherwise hold
    for the pass: at 2M documents the driver was ~100 MB larger at the fork than at 50k. First the regions
    that asked for huge pages are told not to (``_no_huge_pages``), so that the freed pages Arrow's
    allocator hands back are not filled in again by khugepaged during the pass. ``pool_map`` calls it
    when ``_needs_shed``."""
    import gc

    from data_juicer.utils.memory import release_freed_memory

    gc.collect()
    _no_huge_pages()
    release_freed_memory()


def _data_bytes(ds) -> int:
    """The bytes of ``ds``'s Arrow table (its indices mapping aside); the shed's size test, so a table
    that cannot say counts as large."""
    try:
        return int(ds.data.nbytes)
    except Exception:  # noqa: BLE001 - then shed as before
        return SHED_MIN_DATA_BYTES


def pool_map(ds, fn: Callable[[dict], dict], *, batch_size: int, num_proc: int, chunk_rows: Optional[int] = None,
             fingerprint: Optional[str] = None, cache_dir: Optional[str] = None, load_from_cache_file: bool = True,
             remove_columns: Sequence[str] = (), desc: str = ""):
    """``ds.map(fn, batched=True, batch_size=batch_size, num_proc=num_proc, remove_columns=...)`` on
    our forked workers (module docstring). ``cache_dir``: where the chunk files go with a
    ``fingerprint`` (the input's cache folder); without it, ``datasets``' temporary cache folder."""
    import uuid

    from datasets.formatting import get_formatter

    cached = from_cache(load_cached, cache_dir, fingerprint, load_from_cache_file, desc)
    if cached is not None:
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
    paths = [_chunk_path(folder, tag, i, n_chunks) for i in range(n_chunks)]

    def write(i: int, start: int, stop: int) -> int:
        return _write_chunk(arrow_ds, fn, formatter, ds.features, start, stop, batch_size, remove_columns, paths[i])

    rows_out = run_chunks(write, paths, chunk, num_rows, num_proc, desc, _data_bytes(ds), _progress)
    keep = drop_empty_chunks(paths, rows_out)
    out = _assemble(keep, fingerprint)
    if persistent:
        write_listing(_marker(folder, tag), keep, out.num_rows)
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


def run_chunks(write: Callable[[int, int, int], int], paths: Sequence[str], chunk: int, num_rows: int,
               num_proc: int, desc: str = "", data_bytes: int = SHED_MIN_DATA_BYTES,
               progress: Optional[Callable] = None) -> dict:
    """Chunk ``i`` of ``paths`` (rows ``[i * chunk, min((i + 1) * chunk, num_rows))``), written by
    ``write(i, start, stop)`` (which returns the rows it wrote, into ``paths[i]`` by way of
    ``paths[i] + ".tmp<pid>"``) on ``num_proc`` forked workers that take the next chunk as they become free,
    each replaced after ``worker_rows()`` rows. Returns {chunk: rows written}. A worker's exception is
    raised here, after the other workers are stopped and every chunk file and temporary file removed."""
    import mmap
    import multiprocessing as mp
    import struct
    from multiprocessing.connection import wait

    from data_juicer.utils.forking import sigterm_held

    n_chunks = len(paths)
    if _needs_shed(data_bytes):
        _shed_memory()  # what the driver frees before the fork is not inherited by (nor counted in) each worker
    ctx = mp.get_context("fork")
    # anonymous shared memory (no file descriptor stays open, unlike multiprocessing.Value's heap)
    counter = mmap.mmap(-1, 8)
    lock = ctx.Lock()
    max_rows = worker_rows()
    procs, conns = [], []
    live = {}

    def start_worker():
        r, w = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_worker, args=(w, counter, lock, n_chunks, chunk, num_rows, write, max_rows),
                        daemon=True)
        with sigterm_held():  # see data_juicer.utils.forking: stopped before ``_worker``, it must just die
            p.start()
        w.close()
        procs.append(p)
        conns.append(r)
        live[r] = p

    for _ in range(num_proc):
        start_worker()
    rows_out: dict[int, int] = {}
    bar = progress(num_rows, desc) if progress is not None else None
    error = None
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
                if msg[0] == "exit":
                    if msg[1]:  # it used up its rows: a fresh worker takes its place while chunks are left
                        with lock:
                            left = struct.unpack_from("q", counter, 0)[0] < n_chunks
                        if left:
                            start_worker()
                elif msg[0] == "done":
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
    if error is not None:
        for p in paths:
            for q in (p, *(p + f".tmp{x.pid}" for x in procs)):
                if os.path.exists(q):
                    os.remove(q)
        raise error
    return rows_out
