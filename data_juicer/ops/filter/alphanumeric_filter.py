import re
import sys

from data_juicer.models.loader import ensure_installed, load_hf_tokenizer, resolve_hf_model
from data_juicer.ops.base import Filter
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

    def compute_stats_batched(self, samples):
        key = self.stat_key
        todo = [(t, s) for t, s in zip(samples[self.text_key], samples[Fields.stats]) if key not in s]
        if not todo:
            return samples
        if not self.tokenization:
            for text, stat in todo:
                stat[key] = count_alnum(text) / len(text) if text else 0.0
            return samples
        tokenize = load_hf_tokenizer(self.tokenizer_name, who=self.name).tokenize
        for text, stat in todo:
            n_tokens = len(tokenize(text))
            stat[key] = sum(map(str.isalpha, text)) / n_tokens if n_tokens else 0.0
        return samples

    def process_batched(self, samples):
        key, lo, hi = self.stat_key, self.min_ratio, self.max_ratio
        return [self.get_keep_boolean(s[key], lo, hi) for s in samples[Fields.stats]]
