import heapq
from collections import Counter
from math import isqrt

import numpy as np
from pydantic import PositiveInt

from data_juicer.ops.base import Filter
from data_juicer.ops.common import repetition_numba
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


def char_rep_ratio(text: str, n: int) -> float:
    """Share of the character n-grams of ``text`` taken by its ``isqrt(#distinct)`` most
    frequent repeated n-grams (0.0 when the text is shorter than ``n``)."""
    total = len(text) - n + 1
    if total <= 0:
        return 0.0
    grams = text if n == 1 else map(text.__getitem__, map(slice, range(total), range(n, len(text) + 1)))
    freqs = list(Counter(grams).values())
    n_top = min(isqrt(len(freqs)), len(freqs) - freqs.count(1))
    return sum(heapq.nlargest(n_top, freqs)) / total if n_top > 0 else 0.0


_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit constant: multiplying by it permutes 64-bit values


def char_rep_ratio_fast(text: str, n: int) -> float:
    """``char_rep_ratio`` computed in numpy: each n-gram becomes a 64-bit hash of its code points,
    and equal hashes are counted after a sort (a hash collision between two different n-grams,
    about 2**-64 per pair, is the only way the two can differ)."""
    total = len(text) - n + 1
    if total <= 0:
        return 0.0
    if total < 64:  # short texts: the plain version is faster
        return char_rep_ratio(text, n)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
    h = codes[:total].copy()
    for j in range(1, n):
        h *= _MIX
        h ^= codes[j:j + total]
    h.sort()
    starts = np.flatnonzero(np.concatenate(([True], h[1:] != h[:-1])))
    counts = np.diff(np.append(starts, total))
    k = len(counts)
    n_top = min(isqrt(k), int(np.count_nonzero(counts > 1)))
    if n_top <= 0:
        return 0.0
    return int(np.partition(counts, k - n_top)[k - n_top:].sum()) / total


@OPERATORS.register_module("character_repetition_filter")
class CharacterRepetitionFilter(Filter):
    """Keeps samples whose character n-gram repetition ratio (stat ``char_rep_ratio``) is within
    [min_ratio, max_ratio]. The ratio is the share of all ``rep_len``-character n-grams taken by
    the most frequent repeated ones, counting as many of them as the square root of the number of
    distinct n-grams (the measure of Data-Juicer / BigScience)."""

    def __init__(self, rep_len: PositiveInt = 10, min_ratio: float = 0.0, max_ratio: float = 0.5, **kwargs):
        """
        :param rep_len: length in characters of the n-grams
        :param min_ratio: smallest repetition ratio kept
        :param max_ratio: largest repetition ratio kept
        """
        super().__init__(**kwargs)
        if not isinstance(rep_len, int) or isinstance(rep_len, bool) or rep_len < 1:
            raise ValueError(f"character_repetition_filter: rep_len must be a positive integer, got {rep_len!r}")
        self.rep_len = rep_len
        self.min_ratio = min_ratio
        self.max_ratio = max_ratio
        # load (or compile) the compiled kernel here, once, so that the pass's forked workers share it
        # instead of each loading it on its first batch (cached per process; False without C or numba)
        repetition_numba.available()

    def compute_stats_batched(self, samples):
        key, n = StatsKeys.char_rep_ratio, self.rep_len
        texts, stats = samples[self.text_key], samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if key not in s]
        # texts of 64 n-grams or more: one compiled call for the batch (C or numba), else numpy text by text;
        # shorter ones: the exact counting (as char_rep_ratio_fast does)
        long = [i for i in todo if len(texts[i]) - n + 1 >= 64]
        if len(long) > 1 and repetition_numba.available():
            for i, r in zip(long, repetition_numba.char_rep_ratios([texts[i] for i in long], n).tolist()):
                stats[i][key] = r
            todo = [i for i in todo if key not in stats[i]]
        for i in todo:
            stats[i][key] = char_rep_ratio_fast(texts[i], n)
        return samples

    def process_batched(self, samples):
        lo, hi = self.min_ratio, self.max_ratio
        return [self.get_keep_boolean(s[StatsKeys.char_rep_ratio], lo, hi) for s in samples[Fields.stats]]
