from typing import Annotated, Optional

import numpy as np
from pydantic import Field, PositiveInt

from data_juicer.ops.base import Selector
from data_juicer.ops.common.field_values import NUMBER_FALLBACK_LOW, column_to_numbers, field_column, rank_indices
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("range_specified_field_selector")
class RangeSpecifiedFieldSelector(Selector):
    """Ranks samples by ``field_key`` (ascending) and keeps ranks ``lower`` to ``upper``, where
    ``lower`` is the larger of ``int(lower_percentile * n)`` and ``lower_rank`` and ``upper``
    the smaller of ``int(upper_percentile * n)`` and ``upper_rank``. Kept samples come largest
    value first; equal values keep their sample order.

    Values are read as numbers (strings parsed, lists averaged; a missing or unreadable value
    ranks lowest). Both a lower and an upper bound must be given, else nothing is removed."""

    def __init__(self, field_key: str = "",
                 lower_percentile: Optional[Annotated[float, Field(ge=0, le=1)]] = None,
                 upper_percentile: Optional[Annotated[float, Field(ge=0, le=1)]] = None,
                 lower_rank: Optional[PositiveInt] = None, upper_rank: Optional[PositiveInt] = None, **kwargs):
        """
        :param field_key: the field to rank by; levels of a nested field are separated by ``.``
        :param lower_percentile: lower bound as a fraction of the samples (ranks below are dropped)
        :param upper_percentile: upper bound as a fraction of the samples (ranks above are dropped)
        :param lower_rank: lower bound as a rank
        :param upper_rank: upper bound as a rank
        """
        super().__init__(**kwargs)
        self.field_key = field_key
        self.lower_percentile = lower_percentile
        self.upper_percentile = upper_percentile
        self.lower_rank = lower_rank
        self.upper_rank = upper_rank

    def process(self, dataset):
        n = len(dataset)
        if n <= 1 or not self.field_key:
            return dataset
        if self.lower_percentile is None and self.lower_rank is None:
            return dataset
        if self.upper_percentile is None and self.upper_rank is None:
            return dataset
        lower, upper = 0, n
        if self.lower_percentile is not None:
            lower = int(self.lower_percentile * n)
        if self.lower_rank is not None:
            lower = max(lower, self.lower_rank)
        if self.upper_percentile is not None:
            upper = int(self.upper_percentile * n)
        if self.upper_rank is not None:
            upper = min(upper, self.upper_rank)
        upper = max(lower, upper)

        values = column_to_numbers(field_column(dataset, self.field_key, self.name), NUMBER_FALLBACK_LOW)
        lowest = np.asarray(rank_indices(values, upper, largest=False), dtype=np.int64)
        # of the `upper` smallest, the `upper - lower` largest, largest first
        best = rank_indices(values[lowest], upper - lower, largest=True)
        return dataset.select(lowest[best])
