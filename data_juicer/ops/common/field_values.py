"""Reading one dot-nested field (``meta.lang``) the way Data-Juicer's field ops do.

Shared by the ``specified_*`` filters (one row of a batch: ``batch_field_value``) and the
``*_specified_field_selector`` ops (a whole dataset column: ``field_column``), with a clear error
when the path does not exist; plus Data-Juicer's "stat to number" rule and a ranking with
``sorted``'s tie order (earlier sample first).
"""

from __future__ import annotations

import heapq
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# what a missing or unreadable value ranks as (lowest or highest), as in Data-Juicer
NUMBER_FALLBACK_LOW = float(-sys.maxsize)
NUMBER_FALLBACK_HIGH = float(sys.maxsize)


def field_column(dataset, key: str, who: str) -> pa.ChunkedArray:
    """The Arrow column at ``key``: a top-level column, or ``col.sub.field`` into struct columns."""
    names = dataset.column_names
    if key in names:
        return dataset.arrow_column(key)
    head, *rest = key.split(".")
    if head not in names:
        raise ValueError(f"{who}: field_key '{key}' needs a column '{head}', but the dataset has only "
                         f"{names}. Set field_key to an existing (dot-nested) field.")
    col = dataset.arrow_column(head)
    for depth, part in enumerate(rest, start=1):
        typ = col.type
        if not pa.types.is_struct(typ) or typ.get_field_index(part) < 0:
            have = [typ.field(i).name for i in range(typ.num_fields)] if pa.types.is_struct(typ) else []
            where = ".".join([head, *rest[:depth - 1]])
            raise ValueError(f"{who}: field_key '{key}': '{where}' has no field '{part}' "
                             f"({'its fields are ' + str(have) if have else 'it is not a nested record'}).")
        col = pc.struct_field(col, part)  # a null record gives a null field
    return col


def is_plain_numeric(typ: pa.DataType) -> bool:
    return pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ)


def stat_to_number(value, fallback: float) -> float:
    """A stat value as one float, as Data-Juicer ranks stats: strings are parsed, lists averaged;
    anything empty or unreadable becomes ``fallback``."""
    try:
        if isinstance(value, str):
            return float(value)
        if isinstance(value, (bool, int, float)):
            return float(value)
        if value is None or (isinstance(value, list) and not value):
            return fallback
        return float(np.asarray(value).mean())
    except Exception:
        return fallback


def column_to_numbers(col: pa.ChunkedArray, fallback: float) -> np.ndarray:
    """``stat_to_number`` over a whole column; vectorised for numeric columns."""
    typ = col.type
    if pa.types.is_null(typ):
        return np.full(len(col), fallback, dtype=np.float64)
    if is_plain_numeric(typ):
        as_float = pc.cast(col, pa.float64(), safe=False)
        return pc.fill_null(as_float, fallback).to_numpy()
    return np.fromiter((stat_to_number(v, fallback) for v in col.to_pylist()), dtype=np.float64, count=len(col))


def column_for_ranking(col: pa.ChunkedArray):
    """Raw values ready to rank: a numpy array for a null-free numeric column, else a Python list."""
    if is_plain_numeric(col.type) and col.null_count == 0:
        arr = col.to_numpy()
        return arr.astype(np.int8) if arr.dtype == np.bool_ else arr
    return col.to_pylist()


def rank_indices(values, k: int, largest: bool, who: str = "", key: str = "") -> list[int]:
    """Indices of the ``k`` largest (or smallest) values, best first, equal values in sample order.

    Same result as ``sorted(range(n), key=values.__getitem__, reverse=largest)[:k]``; NaN and
    non-numeric values take ``heapq``'s path so even their odd orderings come out the same.
    """
    k = max(0, min(int(k), len(values)))
    if isinstance(values, np.ndarray) and not (values.dtype.kind == "f" and np.isnan(values).any()):
        if largest:  # stable descending: sort the reversed array, then map back
            order = len(values) - 1 - np.argsort(values[::-1], kind="stable")[::-1]
        else:
            order = np.argsort(values, kind="stable")
        return order[:k].tolist()
    seq = values.tolist() if isinstance(values, np.ndarray) else values
    pick = heapq.nlargest if largest else heapq.nsmallest
    try:
        return pick(k, range(len(seq)), seq.__getitem__)
    except TypeError as e:
        raise ValueError(f"{who}: the values of field '{key}' cannot be ordered ({e}); "
                         f"make the field hold comparable values (e.g. all numbers, no nulls).") from e



def batch_field_value(samples: dict[str, list], key: str, i: int, who: str):
    """Row ``i``'s value at dot-nested ``key`` in a columnar batch; a missing level is an error
    (as in Data-Juicer), naming the field and what the sample has instead."""
    if key in samples:
        return samples[key][i]
    head, *rest = key.split(".")
    if head not in samples:
        raise KeyError(f"{who}: the samples have no field '{head}' (of field_key '{key}'); "
                       f"fields: {sorted(samples)}")
    value = samples[head][i]
    for part in rest:
        if not isinstance(value, dict) or part not in value:
            what = f"fields {sorted(value)}" if isinstance(value, dict) else f"value {value!r}"
            raise KeyError(f"{who}: sample has no field '{part}' in '{key}' (found {what})")
        value = value[part]
    return value


def check_scalar_field(col: pa.ChunkedArray, key: str, who: str) -> None:
    """Field selectors group or match values: they must be strings, numbers or nulls."""
    typ = col.type
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_null(typ) \
            or is_plain_numeric(typ) or pa.types.is_decimal(typ):
        return
    raise ValueError(f"{who}: field '{key}' holds {typ} values; it must hold strings, numbers or nulls.")
