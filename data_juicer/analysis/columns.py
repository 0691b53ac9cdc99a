"""The statistics of a dataset as columns, read straight from its Arrow table (no per-row Python).

``__dj__stats__`` (and ``__dj__meta__``, of which only ``__dj__``-prefixed keys count, as in
Data-Juicer) are struct columns; each field becomes one :class:`StatColumn`. List-valued stats
are flattened (pandas ``explode`` without its NaN rows for empty lists), as Data-Juicer's
overall analysis does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from data_juicer.utils.constant import PREFIX, Fields

NUMERIC, STRING, BOOL = "numeric", "string", "bool"


@dataclass
class StatColumn:
    name: str
    kind: str  # numeric | string | bool
    values: object  # pandas Series of the (flattened) values, nulls dropped
    per_sample: Optional[np.ndarray]  # one float per sample for correlations (numeric stats only)
    is_list: bool = False
    is_meta: bool = False
    n_rows: int = 0  # samples (before flattening lists)
    n_values: int = 0  # values after flattening, nulls included (Data-Juicer's histogram bin rule uses it)

    @property
    def numeric(self) -> bool:
        return self.kind in (NUMERIC, BOOL)


def _is_num(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def _from_array(name: str, arr: pa.Array, is_meta: bool) -> Optional[StatColumn]:
    t = arr.type
    n_rows = len(arr)
    is_list = pa.types.is_list(t) or pa.types.is_large_list(t)
    per_sample = None
    if is_list:
        flat = pc.list_flatten(arr)
        lengths = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False)
        # explode: an empty or null list still gives one (NaN) row
        n_values = int(np.maximum(lengths, 1).sum())
        inner = flat.type
        if _is_num(inner) or pa.types.is_boolean(inner):
            vals = pc.cast(flat, pa.float64()).to_numpy(zero_copy_only=False)
            parents = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
            ok = ~np.isnan(vals)
            sums = np.bincount(parents[ok], weights=vals[ok], minlength=n_rows)
            cnt = np.bincount(parents[ok], minlength=n_rows)
            # Data-Juicer's correlation uses each list's mean, and 0 for an empty or missing list
            per_sample = np.where(cnt > 0, sums / np.maximum(cnt, 1), 0.0)
        arr, t = flat, inner
    else:
        n_values = n_rows
    if pa.types.is_null(t) or arr.null_count == len(arr):
        return None
    valid = arr.drop_null() if arr.null_count else arr
    if _is_num(t):
        kind = NUMERIC
        if per_sample is None:
            per_sample = pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False)
    elif pa.types.is_boolean(t):
        kind = BOOL
        if per_sample is None:
            per_sample = pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False)
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        kind = STRING
    else:  # nested structs, binaries...: not analysed (as Data-Juicer)
        return None
    return StatColumn(name, kind, valid.to_pandas().rename(name), per_sample, is_list, is_meta, n_rows, n_values)


def _struct_fields(col: pa.ChunkedArray) -> list[tuple[str, pa.Array]]:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if not pa.types.is_struct(arr.type):
        return []
    return [(arr.type.field(i).name, child) for i, child in enumerate(arr.flatten())]


def _from_pylist(col: pa.ChunkedArray) -> list[tuple[str, pa.Array]]:
    """Fallback for a stats column stored as JSON text or maps: rebuild it as a struct."""
    import json

    rows = col.to_pylist()
    rows = [json.loads(r) if isinstance(r, str) else r for r in rows]
    rows = [r if isinstance(r, dict) else None for r in rows]
    try:
        return _struct_fields(pa.chunked_array([pa.array(rows)]))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return []


def stat_columns(table: pa.Table) -> list[StatColumn]:
    """Every analysable stat of ``table`` (stats first, then ``__dj__`` meta tags), in column order."""
    out: list[StatColumn] = []
    for field_name, is_meta in ((Fields.stats, False), (Fields.meta, True)):
        if field_name not in table.column_names:
            continue
        col = table.column(field_name)
        fields = _struct_fields(col) if pa.types.is_struct(col.type) else _from_pylist(col)
        for name, child in fields:
            if is_meta and not name.startswith(PREFIX):
                continue
            sc = _from_array(name, child, is_meta)
            if sc is not None:
                out.append(sc)
    return out
