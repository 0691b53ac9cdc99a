"""Writing results: jsonl/json/parquet, optional shards, and ``<stem>_stats.jsonl``.

Every file is written under a temporary name in the same folder and renamed when complete,
so a crash never leaves a half file that looks whole. File names follow Data-Juicer:
shards are ``<stem>-<i>-of-<N>.<suffix>`` (zero-padded), stats go to ``<stem>_stats.jsonl``.
As in Data-Juicer (which writes with HF ``to_json``), ``.json`` output is JSON Lines too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from dataclasses import dataclass
from typing import Optional

import pyarrow as pa

from data_juicer.utils.constant import Fields, HashKeys

EXPORT_TYPES = ("jsonl", "json", "parquet")
# hash columns removed unless keep_hashes_in_res_ds (the set Data-Juicer removes)
HASH_COLUMNS = (HashKeys.hash, HashKeys.minhash, HashKeys.simhash, HashKeys.imagehash, HashKeys.videohash)


class ExportError(ValueError):
    pass


def export_format(export_path: str, export_type: Optional[str] = None) -> str:
    fmt = (export_type or os.path.splitext(export_path)[1].lstrip(".")).lower()
    if fmt not in EXPORT_TYPES:
        raise ExportError(f"cannot export to '{export_path}': format '{fmt or '?'}' is not one of "
                          f"{', '.join(EXPORT_TYPES)}; change the suffix or set export_type")
    return fmt


def stats_path_for(export_path: str, fmt: str) -> str:
    suffix = "." + fmt
    return export_path.replace(suffix, "_stats.jsonl") if suffix in export_path else export_path + "_stats.jsonl"


def _tmp_name(path: str) -> str:
    d, b = os.path.split(path)
    return os.path.join(d, f".{b}.tmp-{uuid.uuid4().hex[:8]}")


def _row_batches(table: pa.Table, indices, batch_rows: int):
    for batch, _, _ in _row_spans(table, indices, batch_rows):
        yield batch


def _row_spans(table: pa.Table, indices, batch_rows: int):
    """``(batch, lo, hi)``: the rows to write a batch at a time, each with the rows ``[lo, hi)`` of
    ``table`` it was taken from."""
    if indices is None:
        lo = 0
        for batch in table.to_batches(max_chunksize=batch_rows):
            yield batch, lo, lo + batch.num_rows
            lo += batch.num_rows
        return
    import numpy as np

    from data_juicer.core.dataset import numpy_array

    for start in range(0, len(indices), batch_rows):
        part = np.asarray(indices[start:start + batch_rows])
        if not len(part):
            continue
        # take from the slice these rows lie in: a take on the whole table concatenates every chunk of
        # each column (the whole text column per batch: ~100 MB transient on 50,000 documents)
        lo, hi = int(part.min()), int(part.max()) + 1
        # the row numbers as Arrow without pa.array (which imports pandas, ~0.26 CPU s, in each writer)
        yield table.slice(lo, hi - lo).take(numpy_array(part - lo)), lo, hi


def write_jsonl(table: pa.Table, path: str, batch_rows: int = 256, indices=None) -> None:
    """One JSON object per line, UTF-8 kept, formatted as Data-Juicer writes (``json.dumps``), so
    the same data gives byte-identical files. ``indices``: write only these rows, in this order."""
    os.replace(_jsonl_tmp(table, path, batch_rows, indices), path)


def _jsonl_tmp(table: pa.Table, path: str, batch_rows: int = 256, indices=None) -> str:
    """Write the rows to a temporary name beside ``path``; return that name (removed on failure).
    Small batches (256 rows): the Python strings of a batch are reused by the allocator instead of
    ~10 MB per 4,096 rows staying resident (peers measured +6 vs +107 MB during a 36,859-row export,
    1.41 vs 1.92 CPU s); the bytes written are the same."""
    tmp = _tmp_name(path)
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            _write_range(f, table, indices, 0, _num_rows(table, indices), batch_rows)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return tmp


# rows per process under which an export is not forked (a fork costs ~10-30 ms)
FORK_MIN_ROWS = 2048
ENV_FORK = "DJ_EXPORT_FORK"


def _fork_ok() -> bool:
    return hasattr(os, "fork") and os.environ.get(ENV_FORK, "1").strip().lower() not in ("0", "false", "no", "off")


def _num_rows(table: pa.Table, indices) -> int:
    return table.num_rows if indices is None else len(indices)


def _mapped_text(table: pa.Table) -> list:
    """[(column, MappedPages)] for the string columns of ``table`` (top-level, or fields of a top-level struct)
    whose text lies in a memory-mapped file (none for an in-memory table): the export hands their
    pages back as it goes (minhash's request: the export faulted the whole text back in). Only the
    resident set changes: a dropped page is read again from the file."""
    try:
        from data_juicer.ops.common.mapped_pages import MappedPages

        def strings(col, tp):
            if pa.types.is_string(tp) or pa.types.is_large_string(tp):
                yield col
            elif pa.types.is_struct(tp):
                for j in range(tp.num_fields):
                    yield from strings(pa.chunked_array([c.field(j) for c in col.chunks], tp.field(j).type),
                                       tp.field(j).type)

        out = []
        for i, f in enumerate(table.schema):
            for col in strings(table.column(i), f.type):
                m = MappedPages(col)
                if m.ranges:
                    out.append((col, m))
        return out
    except Exception:  # noqa: BLE001 - only a memory figure
        return []


_DROP_EVERY = 64  # batches between two hand-backs of all pages, when the rows are not in table order


def _ascending(indices) -> bool:
    import numpy as np

    idx = np.asarray(indices)
    return len(idx) < 2 or bool((idx[1:] >= idx[:-1]).all())


def _write_range(f, table: pa.Table, indices, lo: int, hi: int, batch_rows: int) -> None:
    """Rows [lo, hi) of the export (of ``indices`` when given) as JSON lines into the open file ``f``.
    The mapped text is handed back as it is written: rows in table order (a dedup's kept rows) are not
    read again, so after each batch its own bytes (``drop_rows``: one call per column and chunk it
    touches; the peers' MinHash run held 73-81 MB of the Arrow file at the export peak, now 5-7); rows in
    another order all of it every ``_DROP_EVERY`` batches (a page may hold rows still to come)."""
    dumps = json.JSONEncoder(ensure_ascii=False, default=_json_default).encode
    if indices is None:
        spans = ((b, lo + a, lo + z) for b, a, z in _row_spans(table.slice(lo, hi - lo), None, batch_rows))
    else:
        spans = _row_spans(table, indices[lo:hi], batch_rows)
    mapped = _mapped_text(table)
    in_order = bool(mapped) and (indices is None or _ascending(indices[lo:hi]))
    for k, (batch, a, z) in enumerate(spans, 1):
        rows = batch.to_pylist()
        if rows:
            f.write("\n".join(map(dumps, rows)))
            f.write("\n")
        if in_order:
            for _, m in mapped:
                m.drop_rows(a, z)
        elif k % _DROP_EVERY == 0:
            for _, m in mapped:
                m.drop_all()
    for _, m in mapped:
        m.drop_all()


def _append_file(dst, src_path: str) -> None:
    with open(src_path, "rb") as src:
        shutil.copyfileobj(src, dst, 4 << 20)


def jsonl_tmps(jobs: list, procs: int = 1, batch_rows: int = 256) -> list[str]:
    """Write each ``(table, path, indices)`` job as JSON lines to a temporary name beside ``path``;
    return those names (all removed on failure). With ``procs`` > 1 and enough rows, the rows of every
    job are cut into ``procs`` consecutive ranges: this process writes the first range of each job,
    forked processes (which share the tables) write the others to part files, and the parts are
    appended in order. Each row is one ``json.dumps`` line whoever writes it, so the bytes are the same
    as written by one process. A part whose process failed is written here again (a real error in
    the data is then raised here, as without the fork). ``DJ_EXPORT_FORK=0`` turns the fork off."""
    rows = max((_num_rows(t, i) for t, _, i in jobs), default=0)
    procs = max(1, min(procs, rows // FORK_MIN_ROWS)) if _fork_ok() else 1
    if procs <= 1:
        done: list[str] = []
        try:
            for t, path, idx in jobs:
                done.append(_jsonl_tmp(t, path, batch_rows, idx))
        except BaseException:
            for tmp in done:
                if os.path.exists(tmp):
                    os.remove(tmp)
            raise
        return done
    tmps = [_tmp_name(path) for _, path, _ in jobs]
    bounds = []
    for t, _, idx in jobs:
        n = _num_rows(t, idx)
        bounds.append([(n * k // procs, n * (k + 1) // procs) for k in range(procs)])
    parts = {(j, k): f"{tmps[j]}.part{k}" for j in range(len(jobs)) for k in range(1, procs)}
    children: dict[int, int] = {}  # pid -> range
    try:
        for k in range(1, procs):
            pid = os.fork()
            if pid == 0:  # the child: write range k of every job, then leave at once (no exit hooks)
                code = 1
                try:
                    for j, (t, _, idx) in enumerate(jobs):
                        lo, hi = bounds[j][k]
                        with open(parts[(j, k)], "w", encoding="utf-8") as f:
                            _write_range(f, t, idx, lo, hi, batch_rows)
                    code = 0
                finally:
                    os._exit(code)
            children[pid] = k
        outs = []
        for j, (t, _, idx) in enumerate(jobs):
            f = open(tmps[j], "w", encoding="utf-8")
            outs.append(f)
            lo, hi = bounds[j][0]
            _write_range(f, t, idx, lo, hi, batch_rows)
            f.flush()
        failed = set()
        for pid, k in list(children.items()):
            _, status = os.waitpid(pid, 0)
            del children[pid]
            if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
                failed.add(k)
        for j, (t, _, idx) in enumerate(jobs):
            f = outs[j]
            for k in range(1, procs):
                if k in failed:
                    lo, hi = bounds[j][k]
                    _write_range(f, t, idx, lo, hi, batch_rows)
                    f.flush()
                else:
                    _append_file(f.buffer, parts[(j, k)])
            f.close()
        return tmps
    except BaseException:
        for f in locals().get("outs", []):
            f.close()
        for tmp in tmps:
            if os.path.exists(tmp):
                os.remove(tmp)
        raise
    finally:
        for pid in children:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except OSError:
                pass
        for p in parts.values():
            if os.path.exists(p):
                os.remove(p)


def _json_default(obj):
    if hasattr(obj, "tolist"):  # numpy values
        return obj.tolist()
    if isinstance(obj, (bytes, bytearray)):
        return obj.decode("utf-8", errors="replace")
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    raise TypeError(f"cannot write a {type(obj).__name__} value as JSON")


def write_parquet(table: pa.Table, path: str) -> None:
    os.replace(_parquet_tmp(table, path), path)


def _parquet_tmp(table: pa.Table, path: str) -> str:
    import pyarrow.parquet as pq

    tmp = _tmp_name(path)
    try:
        pq.write_table(table, tmp)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return tmp


def _write_tmp(table: pa.Table, path: str, fmt: str) -> str:
    return _parquet_tmp(table, path) if fmt == "parquet" else _jsonl_tmp(table, path)


def _temp_pattern(export_path: str):
    """Temporary files and part folders an export to ``export_path`` makes (result, shards, stats)."""
    stem = os.path.basename(export_path).split(".")[0]
    return re.compile(rf"^\.{re.escape(stem)}[^/]*\.(tmp|parts)-[0-9a-f]{{8}}$")


@dataclass
class ExportReport:
    files: list[str]
    stats_file: Optional[str]
    rows: int


class Exporter:
    def __init__(self, export_path: str, *, export_type: Optional[str] = None, export_shard_size: int = 0,
                 keep_stats_in_res_ds: bool = False, keep_hashes_in_res_ds: bool = False,
                 export_stats: bool = True, num_proc: int = 1, write_procs: int = 1):
        self.export_path = export_path
        self.fmt = export_format(export_path, export_type)
        self.export_shard_size = export_shard_size
        self.keep_stats = keep_stats_in_res_ds
        self.keep_hashes = keep_hashes_in_res_ds
        self.export_stats = export_stats
        self.num_proc = num_proc
        # processes that write one JSONL result (and its stats) together; the bytes do not depend on it
        self.write_procs = max(1, write_procs)
        self.clean_temps()

    def split(self, table: pa.Table) -> tuple[pa.Table, Optional[pa.Table]]:
        """(the rows as they are exported, their stats table or None) of a table or one block of it."""
        internal = [c for c in table.column_names if c in (Fields.error, Fields.context, Fields.row_index)]
        if internal:
            table = table.drop_columns(internal)
        stats = None
        if self.export_stats:
            cols = [c for c in (Fields.stats, Fields.meta) if c in table.column_names]
            if cols:
                stats = table.select(cols)
        drop = []
        if not self.keep_stats:
            drop += [c for c in (Fields.stats, Fields.meta) if c in table.column_names]
        if not self.keep_hashes:
            drop += [c for c in HASH_COLUMNS if c in table.column_names]
        if drop:
            table = table.drop_columns(drop)
        return table, stats

    def shard_names(self, nbytes: int, rows: int) -> list[str]:
        """Shard files for ``rows`` rows of ``nbytes`` bytes (Data-Juicer's names and count)."""
        num = max(1, min(int(nbytes / self.export_shard_size) + 1, rows))
        width = len(str(num)) + 1
        d = os.path.dirname(self.export_path)
        stem = os.path.basename(self.export_path).split(".")[0]
        return [os.path.join(d, f"{stem}-{i:0{width}d}-of-{num:0{width}d}.{self.fmt}") for i in range(num)]

    def clean_temps(self) -> list[str]:
        """Remove the temporary files and part folders an earlier, killed export to this path left."""
        folder = os.path.dirname(os.path.abspath(self.export_path))
        if not os.path.isdir(folder):
            return []
        pattern, removed = _temp_pattern(self.export_path), []
        for name in os.listdir(folder):
            if pattern.match(name):
                path = os.path.join(folder, name)
                if os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    try:
                        os.remove(path)
                    except FileNotFoundError:
                        pass
                removed.append(path)
        if removed:
            from loguru import logger

            logger.info(f"removed {len(removed)} temporary file(s) an interrupted export left: {removed[:3]}")
        return removed

    def remove_stale(self, files: list[str], stats_file: Optional[str]) -> None:
        """Just before the new files take their names: remove what an earlier run wrote for this
        export path that the new result does not replace (its stats file, other shards, the
        unsharded file), so no old file stays beside the new result."""
        keep = {os.path.abspath(f) for f in files}
        stale = []
        old_stats = stats_path_for(self.export_path, self.fmt)
        if stats_file is None and os.path.exists(old_stats):
            stale.append(old_stats)
        folder = os.path.dirname(os.path.abspath(self.export_path))
        stem = os.path.basename(self.export_path).split(".")[0]
        shard = re.compile(rf"^{re.escape(stem)}-\d+-of-\d+\.{re.escape(self.fmt)}$")
        if os.path.isdir(folder):
            stale += [os.path.join(folder, n) for n in os.listdir(folder) if shard.match(n)]
        stale.append(os.path.abspath(self.export_path))
        for f in stale:
            if os.path.abspath(f) not in keep and os.path.isfile(f):
                os.remove(f)

    def export(self, table: pa.Table, indices=None) -> ExportReport:
        """Write the rows of ``table`` (or only ``indices`` of them, in that order): every file under a
        temporary name first, then all renamed at once (stale files of an earlier run removed)."""
        os.makedirs(os.path.dirname(os.path.abspath(self.export_path)) or ".", exist_ok=True)
        table, stats = self.split(table)
        pending: list[tuple[str, str]] = []  # (temporary name, final name)
        try:
            stats_file = None
            if stats is not None:
                stats_file = stats_path_for(self.export_path, self.fmt)
            if self.export_shard_size <= 0 and self.fmt != "parquet":
                # one JSONL result (the usual case): it and the stats file written together, by
                # ``write_procs`` processes (``jsonl_tmps``)
                jobs = ([(stats, stats_file, indices)] if stats is not None else []) + \
                    [(table, self.export_path, indices)]
                tmps = jsonl_tmps(jobs, self.write_procs)
                pending += [(tmp, path) for tmp, (_, path, _) in zip(tmps, jobs)]
                rows = table.num_rows if indices is None else len(indices)
            elif stats is not None:
                pending.append((_jsonl_tmp(stats, stats_file, indices=indices), stats_file))
            if self.export_shard_size > 0 or self.fmt == "parquet":
                if indices is not None:
                    table = table.take(indices)
                jobs = self._shard_jobs(table) if self.export_shard_size > 0 else [(table, self.export_path)]
                pending += self._write_all(jobs)
                rows = table.num_rows
            files = [final for _, final in pending if final != stats_file]
            self.remove_stale(files, stats_file)
            for tmp, final in pending:
                os.replace(tmp, final)
            pending = []
            return ExportReport(files, stats_file, rows)
        finally:
            for tmp, _ in pending:
                if os.path.exists(tmp):
                    os.remove(tmp)

    def _shard_jobs(self, table: pa.Table) -> list[tuple[pa.Table, str]]:
        names = self.shard_names(table.nbytes, table.num_rows)
        num = len(names)
        # contiguous shards of near-equal row counts, as datasets.shard(contiguous=True) splits them
        base, extra = divmod(table.num_rows, num)
        jobs, start = [], 0
        for i, name in enumerate(names):
            length = base + (1 if i < extra else 0)
            jobs.append((table.slice(start, length), name))
            start += length
        return jobs

    def _write_all(self, jobs: list[tuple[pa.Table, str]]) -> list[tuple[str, str]]:
        """Write every (table, final name) job to a temporary file; [(temporary, final)] (none left on failure)."""
        if self.num_proc > 1 and len(jobs) > 1:
            from concurrent.futures import ThreadPoolExecutor, wait

            with ThreadPoolExecutor(min(self.num_proc, len(jobs))) as pool:
                futures = [pool.submit(_write_tmp, t, name, self.fmt) for t, name in jobs]
                wait(futures)
            failed = [f.exception() for f in futures if f.exception() is not None]
            if failed:
                for f in futures:
                    if f.exception() is None and os.path.exists(f.result()):
                        os.remove(f.result())
                raise failed[0]
            return [(f.result(), name) for f, (_, name) in zip(futures, jobs)]
        done: list[tuple[str, str]] = []
        try:
            for t, name in jobs:
                done.append((_write_tmp(t, name, self.fmt), name))
        except BaseException:
            for tmp, _ in done:
                if os.path.exists(tmp):
                    os.remove(tmp)
            raise
        return done
