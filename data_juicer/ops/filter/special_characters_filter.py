import numpy as np

from data_juicer.ops.base import Filter
from data_juicer.ops.common import repetition_numba
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


# 1 for each code point of the special-character set, 0 elsewhere
_SPECIAL_TABLE = np.zeros(0x110000, dtype=np.uint8)
_SPECIAL_TABLE[sorted(map(ord, SPECIAL_CHARACTERS))] = 1


def count_special_batch(texts: list[str]) -> list[int]:
    """``count_special`` of each text: one code-point array for the batch, looked up in the
    special-character table, summed per text (a compiled loop in C or numba, else a cumulative sum)."""
    if not texts:
        return []
    if repetition_numba.counts_available():  # one compiled pass: the same integers
        return repetition_numba.table_counts(texts, _SPECIAL_TABLE)
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))
    csum = np.zeros(len(codes) + 1, dtype=np.int64)
    np.cumsum(_SPECIAL_TABLE[codes], out=csum[1:])
    starts = np.concatenate(([0], ends[:-1]))
    return (csum[ends] - csum[starts]).tolist()


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
        repetition_numba.counts_available()  # load the compiled kernel once, before the workers fork

    def compute_stats_batched(self, samples):
        key = StatsKeys.special_char_ratio
        todo = [(t, s) for t, s in zip(samples[self.text_key], samples[Fields.stats]) if key not in s]
        for (text, stat), n in zip(todo, count_special_batch([t for t, _ in todo])):
            stat[key] = n / len(text) if text else 0.0
        return samples

    def process_batched(self, samples):
        lo, hi = self.min_ratio, self.max_ratio
        return [self.get_keep_boolean(s[StatsKeys.special_char_ratio], lo, hi) for s in samples[Fields.stats]]
