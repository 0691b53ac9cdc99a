"""Row-wise passes of the HF backend's lean path, without ``datasets``.

A recipe whose ops are all row-wise (mappers, filters) or in ``hf.LEAN_OPS``, over JSONL that pyarrow
reads as it is (``Loader.load_lean``), runs here from the load to the export without importing
``datasets`` (~0.9 s of the driver's start-up on two cores, and ~50 MB of its memory). A pass does what
``hf_pool.pool_map`` does over a ``datasets.Dataset``: the same forked workers and chunks, each chunk's
rows turned into Python lists (``Table.to_pydict``, what ``datasets``' Python formatter gives for these
types), ``FusedRun`` over them batch by batch, and the output written as an Arrow file.

The output is typed as ``datasets``' ``ArrowWriter`` types it, for the values where that is plain
pyarrow inference (``write_rows``): input columns are cast to their input type, new columns take the
type pyarrow infers from the first batch of the chunk, later batches are cast to the first one's
schema. Where ``ArrowWriter`` would do something else (JSON-encode dicts whose keys differ or that are
empty, narrow the ints of a tokenizer column, convert numpy or other objects, fail a cast and infer
instead), the writer raises ``Decline`` and the pass is run again on the ``datasets`` path, so the
result is always the one that path gives. ``DJ_LEAN=0`` turns the lean path off.

Cache: with a fingerprint (``use_cache`` and a dataset read from a file), a pass's chunk files are
``cache-<fingerprint>_lean_<i>_of_<n>.arrow`` beside its input, listed by ``cache-<fingerprint>_lean.json``
once all are written, and a rerun maps them from there.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from typing import Callable, Optional, Sequence

import pyarrow as pa

from data_juicer.core.dataset import ArrowRows

# columns ``datasets`` writes with narrower ints than pyarrow infers (``OptimizedTypedSequence``)
_NARROWED_INT_COLUMNS = frozenset({"attention_mask", "special_tokens_mask", "input_ids", "token_type_ids"})
_PLAIN = (str, int, float, bool, bytes)


class Decline(Exception):
    """The lean writer cannot give the result ``datasets`` would: run the pass on the ``datasets`` path."""


class LeanRows(ArrowRows):
    """An ``ArrowRows`` over a lean pass's output: the chunk files' tables, memory-mapped and concatenated,
    with the pass's fingerprint and folder (where the next pass's cache files go)."""

    def __init__(self, table: pa.Table, files: Sequence[str], fingerprint: Optional[str], folder: Optional[str],
                 indices: pa.Table | None = None):
        super().__init__(table, indices)
        self.files = list(files)
        self.fingerprint = fingerprint
        self.folder = folder

    def _derived(self, what: bytes) -> Optional[str]:
        """The fingerprint of a dataset derived from this one by ``what`` (None without one)."""
        if not self.fingerprint:
            return None
        import hashlib

        return hashlib.sha256(self.fingerprint.encode() + b"\0" + what).hexdigest()[:16]

    def select(self, indices) -> "LeanRows":
        import numpy as np

        rows = super().select(indices)
        fp = self._derived(b"select:" + np.ascontiguousarray(indices, dtype=np.int64).tobytes())
        return LeanRows(self._table, self.files, fp, self.folder, rows._indices)

    def remove_columns(self, names) -> "LeanRows":
        fp = self._derived(b"remove:" + json.dumps(list(names)).encode())
        return LeanRows(self._table.drop_columns(list(names)), self.files, fp, self.folder, self._indices)

    def select_columns(self, names) -> "LeanRows":
        fp = self._derived(b"columns:" + json.dumps(list(names)).encode())
        return LeanRows(self._table.select(list(names)), self.files, fp, self.folder, self._indices)

    def _hf_table(self):
        from datasets.table import ConcatenationTable, InMemoryTable, MemoryMappedTable

        if self.files and all(os.path.exists(f) for f in self.files):  # the files, as datasets maps them
            tables = [MemoryMappedTable.from_file(f) for f in self.files]
            table = tables[0] if len(tables) == 1 else ConcatenationTable.from_tables(tables)
            if table.schema.equals(self._table.schema) and table.num_rows == self._table.num_rows:
                return table
        return InMemoryTable(self._table)  # columns removed since (or types aligned): as it is, still mapped


def input_fingerprint(rows: ArrowRows) -> Optional[str]:
    """A fingerprint for ``rows`` (None: no cache): a lean pass's own, or, for the load's Arrow file, one
    made from its path (the file is named after the inputs' paths, sizes and mtimes, ``_stream_path``)."""
    if isinstance(rows, LeanRows):
        return rows.fingerprint
    if rows.path is not None and rows._indices is None:
        import hashlib

        return "lean-" + hashlib.sha256(os.path.abspath(rows.path).encode()).hexdigest()[:16]
    return None


def cache_folder(rows: ArrowRows) -> Optional[str]:
    if isinstance(rows, LeanRows):
        return rows.folder
    return os.path.dirname(rows.path) if rows.path is not None else None


# -- typing the output as datasets' ArrowWriter does ---------------------------------------------------
def _check_values(values: list, col: str) -> None:
    """Raise ``Decline`` where ``ArrowWriter`` would not type ``values`` by plain pyarrow inference: dicts
    whose key sets differ or that are empty, dicts or lists beside scalars (it JSON-encodes those
    fields), and anything but Python's plain scalars (numpy values, dates, objects: it converts them)."""
    todo = [values]
    while todo:
        content = [x for x in todo.pop() if x is not None]
        if not content:
            continue
        first = content[0]
        if type(first) is dict:
            keys = first.keys()
            if not keys:
                raise Decline(f"column {col!r}: an empty dict")
            for x in content:
                if type(x) is not dict or x.keys() != keys:
                    raise Decline(f"column {col!r}: dicts with different keys (or mixed with other values)")
            for k in keys:
                todo.append([x[k] for x in content])
        elif type(first) is list:
            for x in content:
                if type(x) is not list:
                    raise Decline(f"column {col!r}: lists mixed with other values")
            todo.append([v for x in content for v in x])
        else:
            for x in content:
                if type(x) not in _PLAIN:
                    raise Decline(f"column {col!r}: a {type(x).__name__} value")


class _NoCast(Exception):
    """``datasets`` cannot cast the values to the type (a struct with a field the type lacks)."""


def _nulls_only_differ(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether ``src`` is ``dst`` but for null types where ``dst`` has others (a cast fills nothing in)."""
    if src.equals(dst) or pa.types.is_null(src):
        return True
    if pa.types.is_struct(src) and pa.types.is_struct(dst):
        return (src.num_fields == dst.num_fields
                and all(src.field(i).name == dst.field(i).name and _nulls_only_differ(src.field(i).type, dst.field(i).type)
                        for i in range(src.num_fields)))
    if pa.types.is_list(src) and pa.types.is_list(dst):
        return _nulls_only_differ(src.value_type, dst.value_type)
    return False


def _cast(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``arr`` cast to ``target`` as ``datasets``' ``cast_array_to_feature`` casts it: a struct's fields by
    name, those it lacks filled with nulls (a struct with a field ``target`` lacks: ``_NoCast``), null
    types filled in. Any other change of type: ``Decline``."""
    t = arr.type
    if _nulls_only_differ(t, target):
        return arr if t.equals(target) else arr.cast(target)
    if pa.types.is_struct(t) and pa.types.is_struct(target):
        names = [t.field(i).name for i in range(t.num_fields)]
        fields = [target.field(i) for i in range(target.num_fields)]
        if not set(names) <= {f.name for f in fields}:
            raise _NoCast()
        children = dict(zip(names, arr.flatten()))
        arrays = [_cast(children[f.name], f.type) if f.name in children else pa.nulls(len(arr), f.type)
                  for f in fields]
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)
    raise Decline(f"{t} where the file has {target}")


def _array(values: list, col: str, target: Optional[pa.DataType], first: bool = False) -> pa.Array:
    """The Arrow array ``ArrowWriter`` makes of ``values`` for a column of type ``target``: on a chunk's
    first batch, ``target`` is the input's type (None: a new column), and values it cannot be cast to keep
    the type they have (as ``datasets`` falls back to inference); on a later one, the chunk's type."""
    _check_values(values, col)
    try:
        arr = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
        raise Decline(f"column {col!r}: {e}") from e
    if target is None:
        return arr
    try:
        return _cast(arr, target)
    except _NoCast:
        if first:
            return arr
        raise Decline(f"column {col!r}: {arr.type} where the file has {target}")
    except Decline as e:
        raise Decline(f"column {col!r}: {e}") from e


def write_rows(batches, input_schema: pa.Schema, path: str) -> int:
    """Write the output batches (dicts of Python lists) of one chunk as an Arrow stream file at ``path``
    (atomically), typed as ``ArrowWriter(features=<input's>, update_features=True)`` types them. Empty
    batches are skipped; a chunk with no rows gets the input's schema. Returns the rows written."""
    tmp = path + f".tmp{os.getpid()}"
    writer, schema, n = None, None, 0
    try:
        with pa.OSFile(tmp, "wb") as sink:
            try:
                for out in batches:
                    if not out or not len(next(iter(out.values()))):
                        continue
                    if schema is None:
                        if any(c in _NARROWED_INT_COLUMNS for c in out):
                            raise Decline("a tokenizer column (datasets narrows its ints)")
                        names = list(out)
                        arrays = [_array(out[c], c, input_schema.field(c).type if c in input_schema.names else None,
                                         first=True) for c in names]
                        schema = pa.schema([pa.field(c, a.type) for c, a in zip(names, arrays)])
                        writer = pa.ipc.new_stream(sink, schema)
                    else:
                        if set(out) != set(schema.names):
                            raise Decline("a later batch has other columns")
                        arrays = [_array(out[f.name], f.name, f.type) for f in schema]
                    table = pa.Table.from_arrays(arrays, schema=schema)
                    writer.write_table(table)
                    n += table.num_rows
                if writer is None:
                    writer = pa.ipc.new_stream(sink, input_schema)
            finally:
                if writer is not None:
                    writer.close()
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return n


def run_batches(rows: ArrowRows, fn: Callable[[dict], dict], start: int, stop: int, batch_size: int,
                remove_columns: Sequence[str] = ()):
    """``fn`` over rows [start, stop) of ``rows`` (its pending selection honoured), batch by batch, each
    output in the order ``map`` merges it: the input's columns that it keeps (all but ``remove_columns``,
    unless ``fn`` returns them), then its new ones."""
    cols = [c for c in rows.table.column_names if c not in remove_columns]
    for a in range(start, stop, batch_size):
        inputs = rows.slice_table(a, min(a + batch_size, stop) - a).to_pydict()
        out = fn(inputs)
        # as map merges them: every input column (the function's value where it returned one), then the new ones
        merged = {c: out[c] if c in out else inputs[c] for c in cols}
        merged.update((c, v) for c, v in out.items() if c not in merged)
        if len({len(v) for v in merged.values()}) > 1:
            raise Decline("the output's columns differ in length (datasets reports it)")
        yield merged


# -- the chunk files ----------------------------------------------------------------------------------
def _marker(folder: str, tag: str) -> str:
    return os.path.join(folder, f"cache-{tag}_lean.json")


def _chunk_path(folder: str, tag: str, i: int, n: int) -> str:
    return os.path.join(folder, f"cache-{tag}_lean_{i:05d}_of_{n:05d}.arrow")


def _map_file(path: str) -> pa.Table:
    return pa.ipc.open_stream(pa.memory_map(path)).read_all()


def assemble(files: Sequence[str], fingerprint: Optional[str], folder: Optional[str]) -> LeanRows:
    """The chunk files as one ``LeanRows``, in order. Chunks whose schemas differ are aligned where only
    a top-level column is null in some of them (``concatenate_datasets`` does that much); anything else
    declines (``datasets`` aligns it its own way)."""
    tables = [_map_file(p) for p in files]
    first = tables[0].schema
    if not all(t.schema.equals(first) for t in tables[1:]):
        names = first.names
        if not all(t.schema.names == names for t in tables[1:]):
            raise Decline("chunks with other columns")
        target = []
        for i, name in enumerate(names):
            types = [t.schema.field(i).type for t in tables]
            real = [tp for tp in types if not pa.types.is_null(tp)]
            if real and not all(tp.equals(real[0]) for tp in real):
                raise Decline(f"chunks type {name!r} differently")
            target.append(pa.field(name, real[0] if real else pa.null()))
        schema = pa.schema(target)
        tables = [t if t.schema.equals(schema) else t.cast(schema) for t in tables]
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    return LeanRows(table, files, fingerprint, folder)


def load_cached(folder: str, fingerprint: str) -> Optional[LeanRows]:
    from data_juicer.core.backends.hf_pool import listed_files

    files = listed_files(_marker(folder, fingerprint))
    if not files:
        return None
    try:
        return assemble(files, fingerprint, folder)
    except (OSError, pa.ArrowInvalid, Decline):
        return None


def _progress(total: int, desc: str):
    """A tqdm bar fed by finished chunks, on a terminal (where ``datasets`` shows its bars)."""
    import sys

    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc[:80] or None, unit=" examples")


_TMP_DIRS: list[str] = []


def _temporary_folder(parent: Optional[str]) -> str:
    """A folder for a pass without a cache, removed when the process ends (as ``datasets``' temporary
    cache files are)."""
    if parent:
        os.makedirs(parent, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="dj_lean_", dir=parent)
    if not _TMP_DIRS:
        atexit.register(lambda: [shutil.rmtree(d, ignore_errors=True) for d in _TMP_DIRS])
    _TMP_DIRS.append(folder)
    return folder


def pool_map(rows: ArrowRows, fn: Callable[[dict], dict], *, batch_size: int, num_proc: int, chunk_rows: int,
             fingerprint: Optional[str], cache_dir: Optional[str], tmp_parent: Optional[str],
             load_from_cache_file: bool = True, remove_columns: Sequence[str] = (), desc: str = "") -> LeanRows:
    """``hf_pool.pool_map`` for ``ArrowRows`` (module docstring): the same chunks and forked workers
    (``num_proc`` 1: in this process), the same result as the ``datasets`` path, or ``Decline``.
    ``remove_columns``: input columns left out of the result (``map``'s ``remove_columns``)."""
    from data_juicer.core.backends import hf_pool

    cached = hf_pool.from_cache(load_cached, cache_dir, fingerprint, load_from_cache_file, desc)
    if cached is not None:
        return cached
    persistent = bool(fingerprint and cache_dir)
    folder = cache_dir if persistent else _temporary_folder(tmp_parent)
    os.makedirs(folder, exist_ok=True)
    tag = fingerprint if persistent else "tmp"
    num_rows = rows.num_rows
    chunk = max(1, chunk_rows)
    n_chunks = max(1, -(-num_rows // chunk))
    num_proc = max(1, min(num_proc, n_chunks))
    batch_size = max(1, min(batch_size, chunk))
    schema = rows.table.schema
    if remove_columns:
        schema = pa.schema([f for f in schema if f.name not in remove_columns])

    def write(i: int, start: int, stop: int) -> int:
        return write_rows(run_batches(rows, fn, start, stop, batch_size, remove_columns), schema,
                          _chunk_path(folder, tag, i, n_chunks))

    paths = [_chunk_path(folder, tag, i, n_chunks) for i in range(n_chunks)]
    if num_proc > 1:
        rows_out = hf_pool.run_chunks(write, paths, chunk, num_rows, num_proc, desc, rows.table.nbytes, _progress)
    else:
        try:
            rows_out = {i: write(i, i * chunk, min((i + 1) * chunk, num_rows)) for i in range(n_chunks)}
        except BaseException:
            for p in paths:
                if os.path.exists(p):
                    os.remove(p)
            raise
    keep = hf_pool.drop_empty_chunks(paths, rows_out)
    out = assemble(keep, fingerprint if persistent else None, folder)
    if persistent:
        hf_pool.write_listing(_marker(folder, tag), keep, out.num_rows)
    return out
