import sys

from data_juicer.ops.base import Filter
from data_juicer.ops.common.field_values import batch_field_value
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields


def _as_number(value):
    """The value as a float, or None when it is not a number.

    Falsy values (``0``, ``0.0``, ``""``, ``None``, ``False``) count as "not a number", and
    strings such as ``"3.5"`` as numbers: this is Data-Juicer 1.6's rule, kept for identical
    output."""
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        return None
    except TypeError:
        raise TypeError(f"value {value!r} of type {type(value).__name__} cannot be read as a number") from None


@OPERATORS.register_module("specified_numeric_field_filter")
class SpecifiedNumericFieldFilter(Filter):
    """Keeps samples whose numeric field ``field_key`` (dot-nested, e.g. ``meta.score``) lies in
    [min_value, max_value]; a non-numeric, missing-valued or zero field is dropped (as in
    Data-Juicer 1.6, which treats 0 as "no number").

    The field's value is copied into the stats under the key ``field_key`` itself. With an
    empty ``field_key`` every sample is kept. A sample lacking the field is an error."""

    modality = "general"

    def __init__(self, field_key: str = "", min_value: float = -sys.maxsize, max_value: float = sys.maxsize,
                 **kwargs):
        """
        :param field_key: the field to test; levels of a nested field are separated by ``.``
        :param min_value: smallest value kept
        :param max_value: largest value kept
        """
        super().__init__(**kwargs)
        self.field_key = field_key
        self.min_value = min_value
        self.max_value = max_value

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
        if not self.field_key:
            return [True] * len(stats)
        keep = []
        for stat in stats:
            number = _as_number(stat[self.field_key])
            keep.append(number is not None and self.get_keep_boolean(number, self.min_value, self.max_value))
        return keep
