import sys

from data_juicer.ops.base import Filter
from data_juicer.ops.common.text_words import text_lines
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("maximum_line_length_filter")
class MaximumLineLengthFilter(Filter):
    """Keeps samples whose longest line (stat ``max_line_length``: characters of the longest
    line from ``str.splitlines``; 0 when there are no lines) is within [min_len, max_len].
    When fused, the line split is shared through ``__dj__context__``."""

    uses = (InterVars.lines,)

    def __init__(self, min_len: int = 10, max_len: int = sys.maxsize, **kwargs):
        """
        :param min_len: smallest maximum line length kept
        :param max_len: largest maximum line length kept
        """
        super().__init__(**kwargs)
        self.min_len = min_len
        self.max_len = max_len

    def compute_stats_batched(self, samples, context=False):
        key = StatsKeys.max_line_length
        lines_key = f"{InterVars.lines}-{self.text_key}"
        contexts = samples[Fields.context] if context else None
        for i, (text, stat) in enumerate(zip(samples[self.text_key], samples[Fields.stats])):
            if key in stat:
                continue
            lines = text_lines(text, contexts[i] if contexts else None, lines_key)
            stat[key] = max(map(len, lines), default=0)
        return samples

    def process_batched(self, samples):
        lo, hi = self.min_len, self.max_len
        return [self.get_keep_boolean(s[StatsKeys.max_line_length], lo, hi) for s in samples[Fields.stats]]
