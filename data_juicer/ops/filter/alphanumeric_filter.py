import re
import sys

import numpy as np

from data_juicer.models.loader import ensure_installed, load_hf_tokenizer, resolve_hf_model
from data_juicer.ops.base import Filter
from data_juicer.ops.common import repetition_numba
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys

# \w is exactly str.isalnum() plus "_", so this removes every non-alphanumeric character
_NON_ALNUM = re.compile(r"[\W_]+")
_ASCII_NON_ALNUM = dict.fromkeys(c for c in range(128) if not chr(c).isalnum())


def count_alnum(text: str) -> int:
    """Number of characters of ``text`` for which ``str.isalnum()`` holds."""
    if text.isascii():
        return len(text.translate(_ASCII_NON_ALNUM))
    return len(_NON_ALNUM.sub("", text))


# str.isalnum() of each code point as 0/1: the BMP filled at import (~10 ms), the code points
# above it when a text holds them (``_KNOWN``)
_ALNUM_TABLE = np.zeros(0x110000, dtype=np.uint8)
_ALNUM_TABLE[:0x10000] = np.fromiter(map(str.isalnum, map(chr, range(0x10000))), dtype=np.bool_, count=0x10000)
_KNOWN = np.zeros(0x110000, dtype=np.bool_)
_KNOWN[:0x10000] = True


def _alnum_table(codes: np.ndarray) -> np.ndarray:
    """The ``isalnum`` table, complete for every code point of ``codes``."""
    high = codes[codes > 0xFFFF]
    new = high[~_KNOWN[high]] if len(high) else high
    if len(new):
        new = np.unique(new)
        _ALNUM_TABLE[new] = np.fromiter(map(str.isalnum, map(chr, new.tolist())), dtype=np.bool_, count=len(new))
        _KNOWN[new] = True
    return _ALNUM_TABLE


def count_alnum_batch(texts: list[str]) -> list[int]:
    """``count_alnum`` of each text: one code-point array for the batch, looked up in the
    ``isalnum`` table, summed per text (a compiled loop in C or numba, else a cumulative sum)."""
    if not texts:
        return []
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if repetition_numba.counts_available():  # one compiled pass: the same integers
        return repetition_numba.table_counts(texts, _alnum_table(codes), codes)
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))
    csum = np.zeros(len(codes) + 1, dtype=np.int64)
    np.cumsum(_alnum_table(codes)[codes], out=csum[1:])
    starts = np.concatenate(([0], ends[:-1]))
    return (csum[ends] - csum[starts]).tolist()


@OPERATORS.register_module("alphanumeric_filter")
class AlphanumericFilter(Filter):
    """Keeps samples whose share of alphanumeric characters is within [min_ratio, max_ratio].

    By default the stat ``alnum_ratio`` is alphanumeric characters / all characters (0.0 for an
    empty text). With ``tokenization=True`` the stat is ``alpha_token_ratio``: alphabetic
    characters / tokens of the Hugging Face tokenizer ``EleutherAI/pythia-6.9b-deduped``
    (needs ``transformers`` and the tokenizer on disk: see ``data_juicer.models.loader``).
    """

    tokenizer_name = "EleutherAI/pythia-6.9b-deduped"

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        return ("transformers",) if params.get("tokenization") else ()

    def __init__(self, tokenization: bool = False, min_ratio: float = 0.25, max_ratio: float = sys.maxsize,
                 **kwargs):
        """
        :param tokenization: count alphabetic characters per tokenizer token instead of
            alphanumeric characters per character
        :param min_ratio: smallest ratio kept
        :param max_ratio: largest ratio kept
        """
        super().__init__(**kwargs)
        self.tokenization = tokenization
        self.min_ratio = min_ratio
        self.max_ratio = max_ratio
        self.stat_key = StatsKeys.alpha_token_ratio if tokenization else StatsKeys.alnum_ratio
        if tokenization:
            self.requires = ("transformers",)
            ensure_installed(self.requires, self.name)
            resolve_hf_model(self.tokenizer_name, who=self.name)  # fail now, not on the first batch
        else:
            repetition_numba.counts_available()  # load the compiled kernel once, before the workers fork

    def compute_stats_batched(self, samples):
        key = self.stat_key
        todo = [(t, s) for t, s in zip(samples[self.text_key], samples[Fields.stats]) if key not in s]
        if not todo:
            return samples
        if not self.tokenization:
            counts = count_alnum_batch([t for t, _ in todo])
            for (text, stat), n in zip(todo, counts):
                stat[key] = n / len(text) if text else 0.0
            return samples
        tokenize = load_hf_tokenizer(self.tokenizer_name, who=self.name).tokenize
        for text, stat in todo:
            n_tokens = len(tokenize(text))
            stat[key] = sum(map(str.isalpha, text)) / n_tokens if n_tokens else 0.0
        return samples

    def process_batched(self, samples):
        key, lo, hi = self.stat_key, self.min_ratio, self.max_ratio
        return [self.get_keep_boolean(s[key], lo, hi) for s in samples[Fields.stats]]
