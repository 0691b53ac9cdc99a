from typing import List

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from data_juicer.ops.base import Selector
from data_juicer.ops.common.field_values import check_scalar_field, field_column
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("tags_specified_field_selector")
class TagsSpecifiedFieldSelector(Selector):
    """Keeps the samples whose ``field_key`` value (dot-nested allowed) equals one of
    ``target_tags`` (case-sensitive), in their original order. The field must hold strings,
    numbers or nulls."""

    def __init__(self, field_key: str = "", target_tags: List[str] = None, **kwargs):
        """
        :param field_key: the field to test; levels of a nested field are separated by ``.``
        :param target_tags: the values to keep
        """
        super().__init__(**kwargs)
        self.field_key = field_key
        self.target_tags = None if target_tags is None else set(target_tags)

    def process(self, dataset):
        if len(dataset) <= 1 or not self.field_key:
            return dataset
        if self.target_tags is None:
            raise ValueError(f"{self.name}: target_tags is not set; give the list of {self.field_key!r} "
                             f"values to keep.")
        col = field_column(dataset, self.field_key, self.name)
        check_scalar_field(col, self.field_key, self.name)
        tags = self.target_tags
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            wanted = [t for t in tags if isinstance(t, str)] + ([None] if None in tags else [])
            mask = pc.is_in(col, value_set=pa.array(wanted, type=col.type)).to_numpy(zero_copy_only=False)
            keep = np.flatnonzero(mask)
        else:
            keep = [i for i, v in enumerate(col.to_pylist()) if v in tags]
        return dataset.select(keep)
