"""Writing results: jsonl/json/parquet, optional shards, and ``<stem>_stats.jsonl``.

Every file is written under a temporary name in the same folder and renamed when complete,
so a crash never leaves a half file that looks whole. File names follow Data-Juicer:
shards are ``<stem>-<i>-of-<N>.<suffix>`` (zero-padded), stats go to ``<stem>_stats.jsonl``.
As in Data-Juicer (which writes with HF ``to_json``), ``.json`` output is JSON Lines too.
"""

from __future__ import annotations

import json
import os
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
    if indices is None:
        yield from table.to_batches(max_chunksize=batch_rows)
        return
    for start in range(0, len(indices), batch_rows):
        yield table.take(indices[start:start + batch_rows])


def write_jsonl(table: pa.Table, path: str, batch_rows: int = 4096, indices=None) -> None:
    """One JSON object per line, UTF-8 kept, formatted as Data-Juicer writes (``json.dumps``), so
    the same data gives byte-identical files. ``indices``: write only these rows, in this order."""
    tmp = _tmp_name(path)
    dumps = json.JSONEncoder(ensure_ascii=False, default=_json_default).encode
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for batch in _row_batches(table, indices, batch_rows):
                rows = batch.to_pylist()
                if rows:
                    f.write("\n".join(map(dumps, rows)))
                    f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _json_default(obj):
    if hasattr(obj, "tolist"):  # numpy values
        return obj.tolist()
    if isinstance(obj, (bytes, bytearray)):
        return obj.decode("utf-8", errors="replace")
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    raise TypeError(f"cannot write a {type(obj).__name__} value as JSON")


def write_parquet(table: pa.Table, path: str) -> None:
    import pyarrow.parquet as pq

    tmp = _tmp_name(path)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _write(table: pa.Table, path: str, fmt: str) -> None:
    if fmt == "parquet":
        write_parquet(table, path)
    else:
        write_jsonl(table, path)


@dataclass
class ExportReport:
    files: list[str]
    stats_file: Optional[str]
    rows: int


class Exporter:
    def __init__(self, export_path: str, *, export_type: Optional[str] = None, export_shard_size: int = 0,
                 keep_stats_in_res_ds: bool = False, keep_hashes_in_res_ds: bool = False,
                 export_stats: bool = True, num_proc: int = 1):
        self.export_path = export_path
        self.fmt = export_format(export_path, export_type)
        self.export_shard_size = export_shard_size
        self.keep_stats = keep_stats_in_res_ds
        self.keep_hashes = keep_hashes_in_res_ds
        self.export_stats = export_stats
        self.num_proc = num_proc

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

    def export(self, table: pa.Table, indices=None) -> ExportReport:
        """Write the rows of ``table`` (or only ``indices`` of them, in that order)."""
        os.makedirs(os.path.dirname(os.path.abspath(self.export_path)) or ".", exist_ok=True)
        table, stats = self.split(table)
        stats_file = None
        if stats is not None:
            stats_file = stats_path_for(self.export_path, self.fmt)
            write_jsonl(stats, stats_file, indices=indices)
        if self.export_shard_size > 0 or self.fmt == "parquet":
            if indices is not None:
                table = table.take(indices)
            files = self._write_shards(table) if self.export_shard_size > 0 else [self._write_one(table)]
            return ExportReport(files, stats_file, table.num_rows)
        write_jsonl(table, self.export_path, indices=indices)
        return ExportReport([self.export_path], stats_file, table.num_rows if indices is None else len(indices))

    def _write_one(self, table: pa.Table) -> str:
        _write(table, self.export_path, self.fmt)
        return self.export_path

    def _write_shards(self, table: pa.Table) -> list[str]:
        names = self.shard_names(table.nbytes, table.num_rows)
        num = len(names)
        # contiguous shards of near-equal row counts, as datasets.shard(contiguous=True) splits them
        base, extra = divmod(table.num_rows, num)
        jobs, start = [], 0
        for i, name in enumerate(names):
            length = base + (1 if i < extra else 0)
            jobs.append((table.slice(start, length), name))
            start += length
        if self.num_proc > 1 and num > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(self.num_proc, num)) as pool:
                list(pool.map(lambda j: _write(j[0], j[1], self.fmt), jobs))
        else:
            for t, name in jobs:
                _write(t, name, self.fmt)
        return names
