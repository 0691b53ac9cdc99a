"""Distributed export on Ray: every block is serialised by a task in the cluster, the driver
only streams finished bytes into place.

1. one task per block writes its rows (and its stats rows) as a part file in a temporary
   folder beside the export path (jsonl as the default exporter writes it, or parquet with the
   dataset's unified schema); the driver holds no rows, only per-block counts;
2. the driver concatenates the parts into the result file(s), streaming (a line or a record
   batch at a time), cutting shards at the same row boundaries as the default executor;
3. only when every file is complete are they renamed to their final names (atomic
   completion: a failed or interrupted export leaves no file that looks whole).
"""

from __future__ import annotations

import os
import shutil
import uuid
from typing import Optional

import pyarrow as pa

from data_juicer.core.exporter import ExportReport, stats_path_for, write_jsonl


def _write_block(table: pa.Table, schema: pa.Schema, folder: str, i: int, exporter) -> tuple:
    """Write block ``i``: (rows, bytes of the exported rows, wrote stats)."""
    import pyarrow.parquet as pq

    from data_juicer.core.ray_dataset import _cast

    table = _cast(table, schema)
    rows, stats = exporter.split(table)
    if exporter.fmt == "parquet":
        pq.write_table(rows, os.path.join(folder, f"{i:08d}.parquet"))
    else:
        write_jsonl(rows, os.path.join(folder, f"{i:08d}.jsonl"))
    if stats is not None:
        write_jsonl(stats, os.path.join(folder, f"{i:08d}.stats.jsonl"))
    return rows.num_rows, rows.nbytes, stats is not None


def _lines(paths):
    for p in paths:
        with open(p, "rb") as f:
            yield from f


def _concat_files(paths, target: str) -> None:
    """``target`` = the files one after another; copied in the kernel where it can (no bytes pass
    through the driver's memory), else in 8 MB chunks."""
    with open(target, "wb") as out:
        for p in paths:
            with open(p, "rb") as f:
                out.flush()  # what a fallback copy buffered goes first
                if not _kernel_copy(f, out):
                    shutil.copyfileobj(f, out, length=8 << 20)


def _kernel_copy(src, dst) -> bool:
    """Append all of ``src`` to ``dst`` with ``os.copy_file_range`` (Linux); False if unsupported."""
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    size = os.fstat(src.fileno()).st_size
    done = 0
    try:
        while done < size:
            n = copy(src.fileno(), dst.fileno(), min(size - done, 1 << 30))
            if n == 0:
                break
            done += n
    except OSError:
        if done:
            raise
        return False
    return done == size


def _jsonl_shards(paths, targets: list[str], lengths: list[int]) -> None:
    lines = _lines(paths)
    for target, n in zip(targets, lengths):
        with open(target, "wb") as out:
            for _ in range(n):
                out.write(next(lines))


def _parquet_out(paths, targets: list[str], lengths: list[int], schema: pa.Schema) -> None:
    import pyarrow.parquet as pq

    def batches():
        for p in paths:
            yield from pq.ParquetFile(p).iter_batches(batch_size=65536)

    it = batches()
    pending: Optional[pa.RecordBatch] = None
    for target, n in zip(targets, lengths):
        with pq.ParquetWriter(target, schema) as w:
            while n > 0:
                if pending is None:
                    pending = next(it, None)
                    if pending is None:
                        break
                take = pending.slice(0, n)
                w.write_batch(take)
                n -= take.num_rows
                pending = pending.slice(take.num_rows) if take.num_rows < pending.num_rows else None


def export_blocks(ds, exporter) -> ExportReport:
    """Export a ``RayDataset`` with ``exporter``'s settings, block by block in the cluster."""
    import ray

    from data_juicer.core.ray_dataset import remote

    export_path = os.path.abspath(exporter.export_path)
    folder = os.path.dirname(export_path)
    os.makedirs(folder, exist_ok=True)
    parts = os.path.join(folder, f".{os.path.basename(export_path)}.parts-{uuid.uuid4().hex[:8]}")
    os.makedirs(parts)
    finals: list[tuple[str, str]] = []  # (temporary name, final name)
    try:
        refs, _ = ds.blocks()
        schema = ds.schema()
        write = remote(_write_block)
        info = ray.get([write.remote(r, schema, parts, i, exporter) for i, r in enumerate(refs)])
        total = sum(n for n, _, _ in info)
        nbytes = sum(b for _, b, _ in info)
        names = [os.path.join(parts, f"{i:08d}.{'parquet' if exporter.fmt == 'parquet' else 'jsonl'}")
                 for i in range(len(refs))]
        stats_file = None
        if any(s for _, _, s in info):
            stats_file = stats_path_for(exporter.export_path, exporter.fmt)
            tmp = os.path.join(parts, "stats.out")
            _concat_files([os.path.join(parts, f"{i:08d}.stats.jsonl") for i, (_, _, s) in enumerate(info) if s], tmp)
            finals.append((tmp, stats_file))
        if exporter.export_shard_size > 0:
            targets = exporter.shard_names(nbytes, total)
            base, extra = divmod(total, len(targets))
            lengths = [base + (1 if i < extra else 0) for i in range(len(targets))]
        else:
            targets, lengths = [exporter.export_path], [total]
        tmps = [os.path.join(parts, f"out-{i}") for i in range(len(targets))]
        if exporter.fmt == "parquet":
            import pyarrow.parquet as pq

            out_schema = pq.read_schema(names[0]) if names else pa.schema([])
            _parquet_out(names, tmps, lengths, out_schema)
        elif len(targets) == 1:
            _concat_files(names, tmps[0])
        else:
            _jsonl_shards(names, tmps, lengths)
        finals += list(zip(tmps, targets))
        exporter.remove_stale(list(targets), stats_file)  # no old stats file / old shards beside the new result
        for tmp, final in finals:  # every file is complete: now they take their names
            os.replace(tmp, final)
        return ExportReport(list(targets), stats_file, total)
    finally:
        shutil.rmtree(parts, ignore_errors=True)
