from data_juicer.ops.base import Filter
from data_juicer.ops.common.field_values import batch_field_value
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields


@OPERATORS.register_module("specified_field_filter")
class SpecifiedFieldFilter(Filter):
    """Keeps samples whose field ``field_key`` (dot-nested, e.g. ``meta.lang``) holds one of
    ``target_value``; a list or tuple field is kept only when every element is a target.

    The field's value is copied into the stats under the key ``field_key`` itself. With an
    empty ``field_key`` or ``target_value`` every sample is kept. ``reversed_range`` inverts
    the decision. A sample lacking the field is an error (recorded in the error ledger)."""

    modality = "general"

    def __init__(self, field_key: str = "", target_value: list = [], **kwargs):
        """
        :param field_key: the field to test; levels of a nested field are separated by ``.``
        :param target_value: the values a sample's field may hold to be kept
        """
        super().__init__(**kwargs)
        self.field_key = field_key
        self.target_value = list(target_value) if target_value is not None else []

    def fields_read(self):
        return {self.field_key.split(".")[0]} if self.field_key else set()

    def compute_stats_batched(self, samples):
        key = self.field_key
        if not key:
            return samples
        for i, stat in enumerate(samples[Fields.stats]):
            if key not in stat:
                stat[key] = batch_field_value(samples, key, i, self.name)
        return samples

    def process_batched(self, samples):
        stats = samples[Fields.stats]
        if not (self.field_key and self.target_value):
            return [True] * len(stats)
        targets, flip = self.target_value, self.reversed_range
        keep = []
        for stat in stats:
            value = stat[self.field_key]
            values = value if isinstance(value, (list, tuple)) else (value,)
            keep.append(all(v in targets for v in values) != flip)
        return keep
