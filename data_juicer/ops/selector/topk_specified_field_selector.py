from typing import Annotated, Optional

from pydantic import Field, PositiveInt

from data_juicer.ops.base import Selector
from data_juicer.ops.common.field_values import (
    NUMBER_FALLBACK_HIGH,
    NUMBER_FALLBACK_LOW,
    column_for_ranking,
    column_to_numbers,
    field_column,
    rank_indices,
)
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("topk_specified_field_selector")
class TopkSpecifiedFieldSelector(Selector):
    """Keeps the samples with the largest (``reverse=True``) or smallest values of
    ``field_key``: ``topk`` of them and/or ``int(top_ratio * n)`` (the smaller wins), best first;
    equal values keep their sample order.

    A top-level field is compared as it is (numbers, or strings in text order; nulls are an
    error). A nested field (``a.b``) is read as a number: strings are parsed, lists averaged,
    and a missing or unreadable value ranks last."""

    def __init__(self, field_key: str = "", top_ratio: Optional[Annotated[float, Field(ge=0, le=1)]] = None,
                 topk: Optional[PositiveInt] = None, reverse: bool = True, **kwargs):
        """
        :param field_key: the field to rank by; levels of a nested field are separated by ``.``
        :param top_ratio: the fraction of samples to keep
        :param topk: the number of samples to keep
        :param reverse: keep the largest values (True) or the smallest (False)
        """
        super().__init__(**kwargs)
        self.field_key = field_key
        self.top_ratio = top_ratio
        self.topk = topk
        self.reverse = reverse

    def process(self, dataset):
        n = len(dataset)
        if n <= 1 or not self.field_key:
            return dataset
        if not self.top_ratio:  # a ratio of 0 counts as unset
            if not self.topk:
                return dataset
            k = self.topk
        else:
            k = self.top_ratio * n
            if self.topk and self.topk < k:
                k = self.topk
        col = field_column(dataset, self.field_key, self.name)
        if "." in self.field_key and self.field_key not in dataset.column_names:
            values = column_to_numbers(col, NUMBER_FALLBACK_LOW if self.reverse else NUMBER_FALLBACK_HIGH)
        else:
            values = column_for_ranking(col)
        return dataset.select(rank_indices(values, int(k), self.reverse, self.name, self.field_key))
