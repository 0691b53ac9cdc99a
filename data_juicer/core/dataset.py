"""The dataset facade dataset-level ops see, over a Hugging Face ``datasets.Dataset``.

Dataset-level ops (dedup's ``process``, selectors, groupers) use only this small surface, so
the Ray backend can offer the same one. ``ArrowRows`` stands in for the ``datasets.Dataset`` on the
HF backend's lean path (``HFBackend.lean``): a recipe of threaded-hashing deduplicators over JSONL
never needs ``datasets`` (its import is ~0.7 CPU s and ~50 MB of the driver's anonymous memory).
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import pyarrow as pa

from data_juicer.utils.nested import column_nested


class DJDataset:
    def __init__(self, hf_dataset, extra: dict[str, pa.ChunkedArray] | None = None, ledger=None):
        self._ds = hf_dataset
        # the job's error ledger: a dataset-level op that contains failures records them here
        self.ledger = ledger
        # columns kept beside the table (e.g. dedup hashes), aligned with its rows as they appear
        self._extra = dict(extra or {})

    # -- reading ---------------------------------------------------------------------------
    @property
    def hf(self):
        """The underlying ``datasets.Dataset``."""
        return self._ds

    @property
    def num_rows(self) -> int:
        return self._ds.num_rows

    def __len__(self) -> int:
        return self._ds.num_rows

    @property
    def column_names(self) -> list[str]:
        return list(self._ds.column_names) + [k for k in self._extra if k not in self._ds.column_names]

    def arrow_column(self, name: str) -> pa.ChunkedArray:
        """One top-level column as Arrow, honouring any pending index mapping (only that column is taken)."""
        if name in self._extra:
            return self._extra[name]
        col = self._ds.data.column(name)
        if self._ds._indices is not None:
            col = col.take(self._ds._indices.column(0))
        return col

    def arrow_column_rows(self, name: str):
        """One top-level column as stored (memory-mapped when the dataset is on disk) and the stored rows
        this dataset holds, in order, as an int64 numpy array (None: all of them, in order). For ops that
        read a wide column a slice at a time (MinHash's bands): ``arrow_column`` copies the whole column
        through a pending row selection (``take``), which holds it all in memory at once."""
        if name in self._extra:
            return self._extra[name], None
        col = self._ds.data.column(name)
        if self._ds._indices is None:
            return col, None
        return col, self._ds._indices.column(0).to_numpy()

    def column(self, key: str) -> list:
        """Python values of a column; ``a.b`` follows nested struct fields."""
        head = key.split(".", 1)[0]
        if key in self._extra:
            return self._extra[key].to_pylist()
        if key in self._ds.column_names:
            return self.arrow_column(key).to_pylist()
        if head not in self._ds.column_names:
            return [None] * self.num_rows
        return column_nested({head: self.arrow_column(head).to_pylist()}, key)

    def arrow_table(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The rows (or only ``columns``) as one Arrow table, in order."""
        ds = self._ds if columns is None else self._ds.select_columns(list(columns))
        if ds._indices is not None:
            ds = ds.flatten_indices()
        return ds.data.table

    def rows(self, indices: Iterable[int]) -> list[dict]:
        return [self._ds[int(i)] for i in indices]

    def iter_batches(self, batch_size: int = 1000):
        for start in range(0, self.num_rows, batch_size):
            yield self._ds[start:start + batch_size]

    # -- deriving --------------------------------------------------------------------------
    def select(self, indices: Sequence[int]) -> "DJDataset":
        extra = {}
        if self._extra:
            idx = pa.array(indices, type=pa.int64())
            extra = {k: v.take(idx) for k, v in self._extra.items()}
        if isinstance(self._ds, ArrowRows):
            return DJDataset(self._ds.select(indices), extra)
        direct = _select_direct(self._ds, indices)
        return DJDataset(direct if direct is not None else self._ds.select(indices), extra)

    def remove_columns(self, names: Sequence[str]) -> "DJDataset":
        extra = {k: v for k, v in self._extra.items() if k not in names}
        names = [n for n in names if n in self._ds.column_names]
        if not names and len(extra) == len(self._extra):
            return self
        return DJDataset(self._ds.remove_columns(names) if names else self._ds, extra)

    def map_batches(self, fn: Callable[[dict], dict], *, batch_size: int = 1000, num_proc: int | None = None,
                    desc: str | None = None) -> "DJDataset":
        num_proc = num_proc if num_proc and num_proc > 1 and self.num_rows > batch_size else None
        return DJDataset(self._ds.map(fn, batched=True, batch_size=batch_size, num_proc=num_proc, desc=desc))

    @classmethod
    def from_table(cls, table: pa.Table) -> "DJDataset":
        import datasets

        return cls(datasets.Dataset(datasets.table.InMemoryTable(table)))

    @classmethod
    def from_rows(cls, rows: list[dict]) -> "DJDataset":
        import datasets

        return cls(datasets.Dataset.from_list(rows))


class ArrowRows:
    """The part of ``datasets.Dataset`` the lean path uses, over one Arrow table (memory-mapped when it
    was loaded from an Arrow file) and a pending row selection kept as HF keeps it (``_indices``: a
    one-column table of uint64 row numbers into the table). The same table and row numbers as the
    ``datasets.Dataset`` the full path builds; ``to_hf`` gives that dataset where a step needs more."""

    def __init__(self, table: pa.Table, indices: pa.Table | None = None, path: str | None = None):
        self._table = table
        self._indices = indices
        self.path = path  # the Arrow stream file the table is mapped from (None: in memory)

    @property
    def data(self):
        return self  # ``ds.data.table`` / ``ds.data.column(name)``, as on a ``datasets`` table

    @property
    def table(self) -> pa.Table:
        return self._table

    def column(self, name):
        return self._table.column(name)

    @property
    def num_rows(self) -> int:
        return self._table.num_rows if self._indices is None else self._indices.num_rows

    def __len__(self) -> int:
        return self.num_rows

    @property
    def column_names(self) -> list[str]:
        return list(self._table.column_names)

    def select_columns(self, names) -> "ArrowRows":
        return ArrowRows(self._table.select(list(names)), self._indices)

    def slice_table(self, start: int, n: int) -> pa.Table:
        """Rows [start, start + n) as a table, the pending selection honoured."""
        if self._indices is None:
            return self._table.slice(start, n)
        return self._table.take(self._indices.column(0).slice(start, n))

    def take_table(self, rows) -> pa.Table:
        """Rows ``rows`` (numbers among the rows this holds) as a table."""
        if self._indices is None:
            return self._table.take(rows)
        return self._table.take(self._indices.column(0).take(rows))

    def remove_columns(self, names) -> "ArrowRows":
        return ArrowRows(self._table.drop_columns(list(names)), self._indices)

    def select(self, indices) -> "ArrowRows":
        import numpy as np

        idx = np.asarray(indices, dtype=np.int64)
        if idx.ndim != 1:
            raise ValueError("select: row numbers must be one-dimensional")
        if len(idx) and (int(idx.min()) < 0 or int(idx.max()) >= self.num_rows):
            raise IndexError(f"select: a row number is outside 0..{self.num_rows - 1}")
        mapping = numpy_array(idx.astype(np.uint64, copy=False))
        if self._indices is not None:
            mapping = self._indices.column(0).take(mapping)
        return ArrowRows(self._table, pa.table({"indices": mapping}))

    def flatten_indices(self) -> "ArrowRows":
        if self._indices is None:
            return self
        return ArrowRows(self._table.take(self._indices.column(0)), None)

    def append_column(self, name: str, values: pa.Array) -> "ArrowRows":
        """``ds.add_column`` of an unselected dataset (HF concatenates the one-column table on the right)."""
        if self._indices is not None:
            raise ValueError("append_column: only on a dataset without a pending row selection")
        return ArrowRows(self._table.append_column(name, values), None, self.path)

    def _hf_table(self):
        """The table as a ``datasets`` table: the Arrow file mapped by ``datasets``, or in memory."""
        from datasets.table import ConcatenationTable, InMemoryTable, MemoryMappedTable

        if self.path is None:
            return InMemoryTable(self._table)
        mapped = MemoryMappedTable.from_file(self.path)
        if mapped.column_names == self._table.column_names:
            return mapped
        # columns appended in memory (the row index)
        extra = self._table.select(self._table.column_names[len(mapped.column_names):])
        return ConcatenationTable.from_tables([mapped, InMemoryTable(extra)], axis=1)

    def to_hf(self):
        """The ``datasets.Dataset`` of the same rows: the Arrow file mapped by ``datasets`` (or the
        in-memory table) with the same pending row selection."""
        import datasets
        from datasets.table import InMemoryTable

        ds = datasets.Dataset(self._hf_table())
        if self._indices is not None:
            ds = datasets.Dataset(ds._data, info=ds.info.copy(), split=ds.split,
                                  indices_table=InMemoryTable(self._indices))
        return ds


def numpy_array(values) -> pa.Array:
    """``pa.array(values)`` of a 1-d numpy array of fixed-width numbers, without what ``pa.array`` does
    first for any numpy input: import pandas (~0.26 CPU s, to ask whether it is a pandas object)."""
    import numpy as np

    values = np.ascontiguousarray(values)
    if values.ndim != 1 or values.dtype.kind not in "iuf" or values.dtype.byteorder not in "=|":
        return pa.array(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def to_numpy(values) -> "np.ndarray":
    """``values.to_numpy()`` of an Arrow array or chunked array of fixed-width numbers without nulls,
    read from its buffers (``to_numpy`` imports pandas first, ~0.26 CPU s); anything else as
    ``to_numpy`` gives it."""
    import numpy as np

    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    t = values.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t)) or values.null_count:
        return values.to_numpy()
    dtype = np.dtype(t.to_pandas_dtype())
    parts = [np.frombuffer(c.buffers()[1], dtype=dtype)[c.offset:c.offset + len(c)] for c in chunks if len(c)]
    if not parts:
        return np.empty(0, dtype=dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _select_direct(ds, indices):
    """``ds.select(indices)`` for numpy row numbers, with the indices mapping built directly from the
    array (scale's request). HF's select turns the array into a Python list (a numpy scalar and a list
    slot per row), walks it twice more and hashes it: +111 MB and 0.64 CPU s for 1.9M int64 indices.
    Same rows in the same order; the fingerprint is derived from the input's and the indices' bytes
    (the same selection gives the same one). None (HF's select is used) for anything else: not a 1-d
    integer array, empty, out of range, or a dataset with a format set."""
    import numpy as np

    if not (isinstance(indices, np.ndarray) and indices.ndim == 1 and indices.dtype.kind in "iu" and len(indices)):
        return None
    if ds._format_type is not None or ds._format_columns is not None or ds._output_all_columns:
        return None
    if int(indices.min()) < 0 or int(indices.max()) >= len(ds):
        return None
    import datasets
    import xxhash
    from datasets.fingerprint import update_fingerprint

    mapping = pa.array(indices.astype(np.uint64, copy=False))
    if ds._indices is not None:
        mapping = ds._indices.column(0).take(mapping)
    fp = update_fingerprint(ds._fingerprint, datasets.Dataset.select,
                            {"indices_xxh3": xxhash.xxh3_64_hexdigest(np.ascontiguousarray(indices)),
                             "n": len(indices)})
    table = datasets.table.InMemoryTable(pa.table({"indices": mapping}))
    return datasets.Dataset(ds._data, info=ds.info.copy(), split=ds.split, indices_table=table, fingerprint=fp)
