from typing import Annotated, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, PositiveInt

from data_juicer.ops.base import Selector
from data_juicer.ops.common.field_values import check_scalar_field, field_column
from data_juicer.ops.registry import OPERATORS


def _group_codes(col: pa.ChunkedArray) -> np.ndarray:
    """Number each distinct value in order of first appearance (null is a value too)."""
    typ = col.type
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_integer(typ) \
            or pa.types.is_boolean(typ) or pa.types.is_null(typ):
        arr = col.combine_chunks() if len(col) else pa.array([], type=typ)
        return pc.dictionary_encode(arr, null_encoding="encode").indices.to_numpy(zero_copy_only=False)
    # floats and the rest: Python equality (0.0 == -0.0, every NaN apart), as Data-Juicer groups them
    seen: dict = {}
    return np.fromiter((seen.setdefault(v, len(seen)) for v in col.to_pylist()), dtype=np.int64, count=len(col))


@OPERATORS.register_module("frequency_specified_field_selector")
class FrequencySpecifiedFieldSelector(Selector):
    """Keeps the samples whose ``field_key`` value is among the most frequent values (least
    frequent with ``reverse=False``): the ``topk`` values and/or the top ``top_ratio`` of the
    distinct values (the smaller wins). Output is grouped by value, most frequent first (equal
    counts in order of first appearance), samples in their order within a group.

    The field (dot-nested allowed) must hold strings, numbers or nulls."""

    def __init__(self, field_key: str = "", top_ratio: Optional[Annotated[float, Field(ge=0, le=1)]] = None,
                 topk: Optional[PositiveInt] = None, reverse: bool = True, **kwargs):
        """
        :param field_key: the field whose values are counted; levels of a nested field are separated by ``.``
        :param top_ratio: the fraction of distinct values to keep
        :param topk: the number of distinct values to keep
        :param reverse: keep the most frequent values (True) or the least frequent (False)
        """
        super().__init__(**kwargs)
        self.field_key = field_key
        self.top_ratio = top_ratio
        self.topk = topk
        self.reverse = reverse

    def process(self, dataset):
        if len(dataset) <= 1 or not self.field_key:
            return dataset
        col = field_column(dataset, self.field_key, self.name)
        check_scalar_field(col, self.field_key, self.name)
        codes = _group_codes(col)
        counts = np.bincount(codes) if len(codes) else np.zeros(0, dtype=np.int64)
        if not self.top_ratio:  # a ratio of 0 counts as unset
            if not self.topk:
                return dataset
            k = self.topk
        else:
            k = self.top_ratio * len(counts)
            if self.topk and self.topk < k:
                k = self.topk
        k = int(k)
        if self.reverse:  # stable descending by count: ties stay in first-appearance order
            order = len(counts) - 1 - np.argsort(counts[::-1], kind="stable")[::-1]
        else:
            order = np.argsort(counts, kind="stable")
        rank = np.full(len(counts), -1, dtype=np.int64)
        rank[order[:k]] = np.arange(min(k, len(counts)))
        row_rank = rank[codes]
        rows = np.flatnonzero(row_rank >= 0)
        return dataset.select(rows[np.argsort(row_rank[rows], kind="stable")])
