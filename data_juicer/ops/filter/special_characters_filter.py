from data_juicer.ops.base import Filter
from data_juicer.ops.common.strip_characters import SPECIAL_CHARACTERS
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys

_is_special = SPECIAL_CHARACTERS.__contains__
# str.translate table deleting every special character: len(t) - len(t.translate(...)) counts them
_DELETE_SPECIAL = dict.fromkeys(map(ord, SPECIAL_CHARACTERS))


def count_special(text: str) -> int:
    """Number of characters of ``text`` in Data-Juicer's special-character set."""
    if text.isascii():  # str.translate has a fast ASCII path
        return len(text) - len(text.translate(_DELETE_SPECIAL))
    return sum(map(_is_special, text))


@OPERATORS.register_module("special_characters_filter")
class SpecialCharactersFilter(Filter):
    """Keeps samples whose share of special characters (stat ``special_char_ratio``: punctuation,
    digits, whitespace, emoji and other symbols of Data-Juicer's set / all characters; 0.0 for an
    empty text) is within [min_ratio, max_ratio]."""

    def __init__(self, min_ratio: float = 0.0, max_ratio: float = 0.25, **kwargs):
        """
        :param min_ratio: smallest special-character ratio kept
        :param max_ratio: largest special-character ratio kept
        """
        super().__init__(**kwargs)
        self.min_ratio = min_ratio
        self.max_ratio = max_ratio

    def compute_stats_batched(self, samples):
        key = StatsKeys.special_char_ratio
        for text, stat in zip(samples[self.text_key], samples[Fields.stats]):
            if key not in stat:
                stat[key] = count_special(text) / len(text) if text else 0.0
        return samples

    def process_batched(self, samples):
        lo, hi = self.min_ratio, self.max_ratio
        return [self.get_keep_boolean(s[StatsKeys.special_char_ratio], lo, hi) for s in samples[Fields.stats]]
