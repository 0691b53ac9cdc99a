"""The dataset facade dataset-level ops see, over a Hugging Face ``datasets.Dataset``.

Dataset-level ops (dedup's ``process``, selectors, groupers) use only this small surface, so
the Ray backend can offer the same one.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import pyarrow as pa

from data_juicer.utils.nested import column_nested


class DJDataset:
    def __init__(self, hf_dataset):
        self._ds = hf_dataset

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
        return list(self._ds.column_names)

    def arrow_column(self, name: str) -> pa.ChunkedArray:
        """One top-level column as Arrow, honouring any pending index mapping."""
        ds = self._ds.flatten_indices() if self._ds._indices is not None else self._ds
        return ds.data.column(name)

    def column(self, key: str) -> list:
        """Python values of a column; ``a.b`` follows nested struct fields."""
        head = key.split(".", 1)[0]
        if key in self._ds.column_names:
            return self.arrow_column(key).to_pylist()
        if head not in self._ds.column_names:
            return [None] * self.num_rows
        return column_nested({head: self.arrow_column(head).to_pylist()}, key)

    def rows(self, indices: Iterable[int]) -> list[dict]:
        return [self._ds[int(i)] for i in indices]

    def iter_batches(self, batch_size: int = 1000):
        for start in range(0, self.num_rows, batch_size):
            yield self._ds[start:start + batch_size]

    # -- deriving --------------------------------------------------------------------------
    def select(self, indices: Sequence[int]) -> "DJDataset":
        return DJDataset(self._ds.select(indices))

    def remove_columns(self, names: Sequence[str]) -> "DJDataset":
        names = [n for n in names if n in self._ds.column_names]
        return DJDataset(self._ds.remove_columns(names)) if names else self

    def map_batches(self, fn: Callable[[dict], dict], *, batch_size: int = 1000, num_proc: int | None = None,
                    desc: str | None = None) -> "DJDataset":
        num_proc = num_proc if num_proc and num_proc > 1 and self.num_rows > batch_size else None
        return DJDataset(self._ds.map(fn, batched=True, batch_size=batch_size, num_proc=num_proc, desc=desc))

    @classmethod
    def from_rows(cls, rows: list[dict]) -> "DJDataset":
        import datasets

        return cls(datasets.Dataset.from_list(rows))
