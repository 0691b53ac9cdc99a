import sys

from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


@OPERATORS.register_module("text_length_filter")
class TextLengthFilter(Filter):
    """Keeps samples whose text length in characters (stat ``text_len``) is within
    [min_len, max_len]."""

    def __init__(self, min_len: int = 10, max_len: int = sys.maxsize, **kwargs):
        """
        :param min_len: smallest text length kept
        :param max_len: largest text length kept
        """
        super().__init__(**kwargs)
        self.min_len = min_len
        self.max_len = max_len

    def compute_stats_batched(self, samples):
        for text, stat in zip(samples[self.text_key], samples[Fields.stats]):
            if StatsKeys.text_len not in stat:
                stat[StatsKeys.text_len] = len(text)
        return samples

    def process_batched(self, samples):
        return [self.get_keep_boolean(s[StatsKeys.text_len], self.min_len, self.max_len)
                for s in samples[Fields.stats]]
