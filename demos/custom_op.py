"""A custom operator in a few lines, used from YAML (configs/demo/custom_op.yaml):

    dj-process --config configs/demo/custom_op.yaml

The recipe names this file in ``custom_operator_paths``; the op is then used like a built-in one.
"""
from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields


@OPERATORS.register_module("full_stop_filter")
class FullStopFilter(Filter):
    """Keeps samples with at least ``min_count`` full stops (stat ``full_stops``)."""

    extension = True

    def __init__(self, min_count: int = 1, **kwargs):
        """:param min_count: fewest full stops a kept sample has"""
        super().__init__(**kwargs)
        self.min_count = min_count

    def compute_stats_single(self, sample):
        sample[Fields.stats].setdefault("full_stops", sample[self.text_key].count("."))
        return sample

    def process_single(self, sample):
        return self.get_keep_boolean(sample[Fields.stats]["full_stops"], self.min_count)
