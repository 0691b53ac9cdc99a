import sys

from data_juicer.ops.base import Filter
from data_juicer.ops.common.text_words import text_lines
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("average_line_length_filter")
class AverageLineLengthFilter(Filter):
    """Keeps samples whose average line length (stat ``avg_line_length``: characters of the
    whole text / number of lines from ``str.splitlines``; 0.0 when there are no lines) is within
    [min_len, max_len]. When fused, the line split is shared through ``__dj__context__``."""

    uses = (InterVars.lines,)

    def __init__(self, min_len: int = 10, max_len: int = sys.maxsize, **kwargs):
        """
        :param min_len: smallest average line length kept
        :param max_len: largest average line length kept
        """
        super().__init__(**kwargs)
        self.min_len = min_len
        self.max_len = max_len

    def compute_stats_batched(self, samples, context=False):
        key = StatsKeys.avg_line_length
        lines_key = f"{InterVars.lines}-{self.text_key}"
        contexts = samples[Fields.context] if context else None
        for i, (text, stat) in enumerate(zip(samples[self.text_key], samples[Fields.stats])):
            if key in stat:
                continue
            n_lines = len(text_lines(text, contexts[i] if contexts else None, lines_key))
            stat[key] = len(text) / n_lines if n_lines else 0.0
        return samples

    def process_batched(self, samples):
        lo, hi = self.min_len, self.max_len
        return [self.get_keep_boolean(s[StatsKeys.avg_line_length], lo, hi) for s in samples[Fields.stats]]
