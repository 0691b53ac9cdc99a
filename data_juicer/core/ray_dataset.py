"""The dataset facade over a Ray Data ``Dataset`` (``executor_type: ray``).

``RayDataset`` offers the surface of ``DJDataset`` that dataset-level ops use (``arrow_column``,
``column``, ``rows``, ``select``, ``remove_columns``, ``map_batches``, ...), so deduplicators and
selectors run unchanged on Ray: a column is gathered to the driver, a selection is applied
block by block in the workers.

Row order: every sample carries a stable id (``__dj__index__``: its position in the loaded
input, renumbered after a stage that fans samples out), and Ray runs with ``preserve_order``,
so block order is dataset order and positions mean the same as on the default executor.
"""

from __future__ import annotations

import math
import os
from typing import Callable, Iterable, Optional, Sequence

import numpy as np
import pyarrow as pa

from data_juicer.utils.constant import Fields
from data_juicer.utils.nested import column_nested

ID = Fields.row_index


def _ray():
    import ray

    return ray


def data_context():
    """Ray Data's context for our runs (preserve_order: block order is dataset order), set where
    Ray Data is first used: the row-wise passes and the JSON Lines read run as plain tasks, so a
    recipe that never builds a Ray Data ``Dataset`` never imports ``ray.data`` (1-4 s on the driver)."""
    import sys

    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = sys.stderr.isatty()
    return ctx


# the environment variables every worker of the Ray instance this process started inherits (its
# raylet was started with them): None when the workers' environment is not known (a joined cluster)
_inherited_env: Optional[dict] = None


def set_inherited_env(env: Optional[dict]) -> None:
    """Record the environment the local Ray instance's workers inherit (``None``: not known)."""
    global _inherited_env
    _inherited_env = dict(env) if env is not None else None


def runtime_env_for(ops: Sequence = ()) -> Optional[dict]:
    """The Ray ``runtime_env`` of a pass over ``ops``: the driver's ``DJ_*`` environment variables
    (``DJ_PRODUCED_DATA_DIR``, ``DJ_MODELS_DIR``, ``DJ_MODEL_PLUGINS``...: workers started before the
    driver set them would not see them) merged with each op's own ``runtime_env`` (its ``env_vars``
    win over the driver's; for other keys the first op that sets one wins). None when there is nothing.
    Variables the workers inherited with the same value (a local Ray this process started after they
    were set) are left out: any ``env_vars`` make Ray start fresh workers for the pass (the idle
    prestarted ones, which already have them, are not used)."""
    env: dict = {}
    env_vars = {k: v for k, v in os.environ.items() if k.startswith("DJ_")}
    for op in ops:
        own = getattr(op, "runtime_env", None) or {}
        for k, v in own.items():
            if k == "env_vars":
                env_vars.update({str(a): str(b) for a, b in (v or {}).items()})
            else:
                env.setdefault(k, v)
    if _inherited_env is not None:
        env_vars = {k: v for k, v in env_vars.items() if _inherited_env.get(k) != v}
    if env_vars:
        env["env_vars"] = env_vars
    return env or None


# -- block-level helpers (run as Ray tasks) -----------------------------------------------------
def to_table(batch: dict) -> pa.Table:
    """A columnar batch back to Arrow (the inverse of ``Table.to_pydict``)."""
    if not batch:
        return pa.table({})
    return pa.Table.from_pydict(batch)


def unify(tables: Sequence[pa.Table]) -> pa.Table:
    tables = [t for t in tables if t.num_columns] or list(tables[:1])
    if not tables:
        return pa.table({})
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="permissive")


def _block_info(table: pa.Table, text_key: Optional[str] = None) -> tuple[int, int]:
    nulls = 0
    if text_key and text_key in table.column_names:
        nulls = table.column(text_key).null_count
    return table.num_rows, nulls


def _prepare_slice(table: pa.Table, start: int, length: int, first_id: int, text_key: Optional[str],
                   media_keys: tuple, base: Optional[str]) -> pa.Table:
    """One slice of a read block: stable ids, absolute media paths, rows with null text removed."""
    import pyarrow.compute as pc

    t = table.slice(start, length)
    if ID in t.column_names:
        t = t.drop_columns([ID])
    t = t.append_column(ID, pa.array(np.arange(first_id, first_id + length, dtype=np.int64)))
    if base:
        for k in media_keys:
            if k in t.column_names and t.schema.field(k).type != pa.null():
                vals = [[p if (not isinstance(p, str) or os.path.isabs(p) or "://" in p) else os.path.join(base, p)
                         for p in paths] if paths else paths for paths in t.column(k).to_pylist()]
                t = t.set_column(t.column_names.index(k), k, pa.array(vals, type=t.schema.field(k).type))
    if text_key and text_key in t.column_names and t.column(text_key).null_count:
        t = t.filter(pc.is_valid(t.column(text_key)))
    return t


def _null_text_rows(table: pa.Table, text_key: str, first_id: int) -> list[dict]:
    import pyarrow.compute as pc

    mask = pc.is_null(table.column(text_key))
    idx = np.flatnonzero(mask.to_numpy(zero_copy_only=False))
    rows = table.take(pa.array(idx)).to_pylist()
    return [{"op": "load", "index": int(first_id + i), "error_type": "NullText",
             "message": f"field '{text_key}' is null", "sample": r} for i, r in zip(idx, rows)]


def _renumber(table: pa.Table, first_id: int) -> pa.Table:
    col = pa.array(np.arange(first_id, first_id + table.num_rows, dtype=np.int64))
    if ID in table.column_names:
        return table.set_column(table.column_names.index(ID), ID, col)
    return table.append_column(ID, col)


def _take_positions(table: pa.Table, positions: np.ndarray, ranks: Optional[np.ndarray]) -> pa.Table:
    out = table.take(pa.array(positions, type=pa.int64()))
    if ranks is not None:
        out = out.append_column("__dj__rank__", pa.array(ranks, type=pa.int64()))
    return out


def _drop_columns(table: pa.Table, names: Sequence[str]) -> pa.Table:
    names = [n for n in names if n in table.column_names]
    return table.drop_columns(names) if names else table


def _select_columns(table: pa.Table, names: Sequence[str]) -> pa.Table:
    return table.select([n for n in names if n in table.column_names])


def _cast(table: pa.Table, schema: pa.Schema) -> pa.Table:
    for f in schema:
        if f.name not in table.column_names:
            table = table.append_column(f.name, pa.nulls(table.num_rows, f.type))
    table = table.select(schema.names)
    return table.cast(schema) if table.schema != schema else table


def _write_parquet_block(table: pa.Table, path: str, schema: pa.Schema) -> int:
    import pyarrow.parquet as pq

    pq.write_table(_cast(table, schema), path)
    return table.num_rows


def _schema(table: pa.Table) -> pa.Schema:
    return table.schema


class _Remote:
    """The block helpers as Ray remote functions, created once per process."""

    _fns: dict = {}

    @classmethod
    def get(cls, fn, **options):
        key = (fn.__name__, tuple(sorted(options.items())))
        if key not in cls._fns:
            cls._fns[key] = _ray().remote(**options)(fn) if options else _ray().remote(fn)
        return cls._fns[key]


def remote(fn, **options):
    return _Remote.get(fn, **options)


class RayDataset:
    """A Ray Data ``Dataset`` with the ``DJDataset`` surface; blocks are kept in dataset order."""

    def __init__(self, ray_ds, *, refs: Optional[list] = None, counts: Optional[list[int]] = None):
        self._ds = ray_ds
        self._refs = refs
        self._counts = counts
        self._schemas: list | None = None  # each block's schema, fetched once (blocks never change)

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_refs(cls, refs: list, counts: Optional[list[int]] = None) -> "RayDataset":
        refs = list(refs)
        if not refs:
            return cls(None, refs=[], counts=[])
        # the Ray Data ``Dataset`` over these blocks is built only when asked for (``.ray``): building
        # one runs a metadata task per block, and our own steps work on the refs directly
        return cls(None, refs=refs, counts=counts)

    @classmethod
    def from_table(cls, table: pa.Table, num_blocks: int = 1) -> "RayDataset":
        ray = _ray()
        n = table.num_rows
        num_blocks = max(1, min(num_blocks, n or 1))
        size = math.ceil(n / num_blocks) if n else 0
        parts = [table.slice(i * size, size) for i in range(num_blocks)] if n else [table]
        return cls.from_refs([ray.put(p) for p in parts], [p.num_rows for p in parts])

    @classmethod
    def from_rows(cls, rows: list[dict]) -> "RayDataset":
        return cls.from_table(pa.Table.from_pylist(rows))

    @classmethod
    def from_row_chunks(cls, chunks: Iterable[list[dict]], rows_per_block: int = 4096) -> "RayDataset":
        """Blocks of about ``rows_per_block`` rows, put in the object store as the chunks come
        (in order): the driver holds one block's rows at a time, never the whole dataset."""
        ray = _ray()
        refs, counts, pending = [], [], []

        def put(rows):
            refs.append(ray.put(pa.Table.from_pylist(rows)))
            counts.append(len(rows))

        for chunk in chunks:
            pending.extend(chunk)
            if len(pending) >= rows_per_block:
                put(pending)
                pending = []
        if pending or not refs:
            put(pending)
        return cls.from_refs(refs, counts)

    # -- the blocks, in order --------------------------------------------------------------
    def blocks(self) -> tuple[list, list[int]]:
        """(block refs in dataset order, rows per block); runs the pending plan once."""
        if self._refs is None:
            refs = list(self._ds.materialize().to_arrow_refs())
            self._refs = refs
        if self._counts is None:
            info = remote(_block_info)
            self._counts = [n for n, _ in _ray().get([info.remote(r) for r in self._refs])]
        return self._refs, self._counts

    @property
    def ray(self):
        """The underlying ``ray.data.Dataset`` (built on first use over the blocks)."""
        if self._ds is None:
            import ray.data

            data_context()
            self._ds = ray.data.from_arrow_refs(self._refs) if self._refs else ray.data.from_arrow(pa.table({}))
        return self._ds

    @property
    def hf(self):
        raise TypeError("this operator needs the Hugging Face backend (executor_type: default); "
                        "it cannot run on a Ray dataset")

    # -- reading ---------------------------------------------------------------------------
    @property
    def num_rows(self) -> int:
        return int(sum(self.blocks()[1]))

    def __len__(self) -> int:
        return self.num_rows

    def _block_schemas(self) -> list:
        if self._schemas is None:
            refs, _ = self.blocks()
            self._schemas = _ray().get([remote(_schema).remote(r) for r in refs])
        return self._schemas

    @property
    def column_names(self) -> list[str]:
        names: dict[str, None] = {}
        for s in self._block_schemas():
            for n in s.names:
                names.setdefault(n, None)
        return list(names)

    def schema(self) -> pa.Schema:
        schemas = self._block_schemas()
        return pa.unify_schemas(schemas, promote_options="permissive") if schemas else pa.schema([])

    def arrow_table(self, columns: Optional[Sequence[str]] = None) -> pa.Table:
        """The rows (or only ``columns``) gathered to the driver, in order."""
        refs, _ = self.blocks()
        if columns is not None:
            refs = [remote(_select_columns).remote(r, list(columns)) for r in refs]
        return unify(_ray().get(refs))

    def arrow_column(self, name: str) -> pa.ChunkedArray:
        table = self.arrow_table([name])
        if name not in table.column_names:
            raise KeyError(name)
        return table.column(name)

    def column(self, key: str) -> list:
        head = key.split(".", 1)[0]
        names = self.column_names
        if key in names:
            return self.arrow_column(key).to_pylist()
        if head not in names:
            return [None] * self.num_rows
        return column_nested({head: self.arrow_column(head).to_pylist()}, key)

    def rows(self, indices: Iterable[int]) -> list[dict]:
        indices = [int(i) for i in indices]
        refs, counts = self.blocks()
        offsets = np.concatenate([[0], np.cumsum(counts)])
        out = []
        for i in indices:
            b = int(np.searchsorted(offsets, i, side="right") - 1)
            table = _ray().get(refs[b])
            out.append(table.slice(i - int(offsets[b]), 1).to_pylist()[0])
        return [{k: v for k, v in r.items() if k != ID} for r in out]

    def iter_batches(self, batch_size: int = 1000):
        refs, _ = self.blocks()
        for r in refs:
            t = _ray().get(r)
            for start in range(0, t.num_rows, batch_size):
                yield t.slice(start, batch_size).to_pydict()

    # -- deriving --------------------------------------------------------------------------
    def select(self, indices: Sequence[int]) -> "RayDataset":
        """Rows at these positions, in this order (applied block by block in the workers)."""
        idx = np.asarray(indices, dtype=np.int64)
        refs, counts = self.blocks()
        if not refs:
            return self
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        ordered = bool(len(idx) < 2 or np.all(np.diff(idx) > 0))
        block_of = np.searchsorted(offsets, idx, side="right") - 1
        take = remote(_take_positions)
        new_refs, new_counts = [], []
        if ordered:
            for b, ref in enumerate(refs):
                mine = idx[block_of == b]
                if len(mine) == counts[b]:
                    new_refs.append(ref)
                elif len(mine):
                    new_refs.append(take.remote(ref, mine - offsets[b], None))
                else:
                    continue
                new_counts.append(len(mine))
            return RayDataset.from_refs(new_refs or [take.remote(refs[0], np.array([], np.int64), None)],
                                        new_counts or [0])
        # any order: take per block with each row's rank, then put the rows in rank order
        ranks = np.arange(len(idx), dtype=np.int64)
        parts = []
        for b, ref in enumerate(refs):
            sel = block_of == b
            if sel.any():
                parts.append(take.remote(ref, idx[sel] - offsets[b], ranks[sel]))
        table = unify(_ray().get(parts)) if parts else pa.table({})
        if table.num_rows:
            table = table.take(np.argsort(table.column("__dj__rank__").to_numpy(), kind="stable"))
            table = table.drop_columns(["__dj__rank__"])
        return RayDataset.from_table(table, max(1, len(refs)))

    def remove_columns(self, names: Sequence[str]) -> "RayDataset":
        names = [n for n in names if n in self.column_names]
        if not names:
            return self
        refs, counts = self.blocks()
        drop = remote(_drop_columns)
        return RayDataset.from_refs([drop.remote(r, names) for r in refs], list(counts))

    def map_batches(self, fn: Callable[[dict], dict], *, batch_size: int = 1000, num_proc: int | None = None,
                    desc: str | None = None) -> "RayDataset":
        refs, _ = self.blocks()
        ds = RayDataset.from_refs(refs).ray
        env = runtime_env_for()
        out = ds.map_batches(_PyDictFn(fn), batch_size=batch_size, batch_format="pyarrow", zero_copy_batch=True,
                             **({"runtime_env": env} if env else {}))
        return RayDataset(out)

    def renumbered(self) -> "RayDataset":
        """Fresh stable ids 0..n-1 in the current order (after a stage that fans samples out)."""
        refs, counts = self.blocks()
        offsets = np.concatenate([[0], np.cumsum(counts)])
        fn = remote(_renumber)
        return RayDataset.from_refs([fn.remote(r, int(o)) for r, o in zip(refs, offsets[:-1])], list(counts))

    def write_parquet_folder(self, folder: str) -> None:
        """One ``part-<i>.parquet`` per block, in order, all with one unified schema."""
        refs, _ = self.blocks()
        schema = self.schema()
        os.makedirs(folder, exist_ok=True)
        w = remote(_write_parquet_block)
        width = max(6, len(str(len(refs))))
        _ray().get([w.remote(r, os.path.join(folder, f"part-{i:0{width}d}.parquet"), schema)
                    for i, r in enumerate(refs)])

    @classmethod
    def read_parquet_folder(cls, folder: str) -> "RayDataset":
        import pyarrow.parquet as pq

        ray = _ray()
        files = sorted(f for f in os.listdir(folder) if f.endswith(".parquet"))
        read = remote(_read_parquet_file)
        refs = [read.remote(os.path.join(folder, f)) for f in files]
        counts = [pq.ParquetFile(os.path.join(folder, f)).metadata.num_rows for f in files]
        if not refs:
            refs = [ray.put(pa.table({}))]
            counts = [0]
        return cls.from_refs(refs, counts)


def _read_parquet_file(path: str) -> pa.Table:
    import pyarrow.parquet as pq

    return pq.read_table(path)


class _PyDictFn:
    """Runs a ``dict[str, list] -> dict[str, list]`` function on an Arrow batch."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, table: pa.Table) -> pa.Table:
        return to_table(self.fn(table.to_pydict()))
