import sys

import numpy as np

from data_juicer.ops.base import Filter
from data_juicer.ops.common import repetition_numba
from data_juicer.ops.common.strip_characters import special_table
from data_juicer.ops.common.text_words import (
    batch_words,
    refine_words,
    sentencepiece_words,
    setup_word_tokenizer,
    stripped_words_context_key,
    words_context_key,
)
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


def count_words_batch(texts: list[str]) -> list[int]:
    """``len(refine_words(split_words(t)))`` of each text without building the words: a word
    survives the strip when it holds a non-special character, so the count is the number of
    non-special characters whose previous character, once the special non-separator ones are
    dropped, is a separator (space, newline, tab) or the start of the text."""
    if not texts:
        return []
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))
    plain = special_table()[codes] == 0
    sep = (codes == 32) | (codes == 10) | (codes == 9)
    kept = np.flatnonzero(plain | sep)
    doc = np.searchsorted(ends, kept, side="right")
    plain_kept = plain[kept]
    after = np.empty(len(kept), dtype=np.bool_)  # previous kept character a separator, or none in the text
    if len(kept):
        after[0] = True
        after[1:] = sep[kept[:-1]] | (doc[1:] != doc[:-1])
    return np.bincount(doc[plain_kept & after], minlength=len(texts)).tolist()


@OPERATORS.register_module("words_num_filter")
class WordsNumFilter(Filter):
    """Keeps samples whose number of words (stat ``num_words``) is within [min_num, max_num].

    Words are split on space, newline and tab, or are the pieces of the sentencepiece model
    ``<lang>.sp.model`` when ``tokenization=True`` (needs ``sentencepiece`` and the model file:
    see ``data_juicer.models.loader``). Special characters (punctuation, digits, emoji...) are
    stripped from both ends of each word and words left empty are not counted. Without
    tokenization the words are counted in one compiled pass over the batch's code points (a C
    library built with the machine's C compiler, else numba; no word list is built); otherwise, and
    without either, the word split is shared through ``__dj__context__`` when fused.
    """

    uses = (InterVars.words,)

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        return ("sentencepiece",) if params.get("tokenization") else ()

    def __init__(self, lang: str = "en", tokenization: bool = False, min_num: int = 10, max_num: int = sys.maxsize,
                 **kwargs):
        """
        :param lang: language of the samples; picks the sentencepiece model when tokenizing
        :param tokenization: count sentencepiece pieces instead of whitespace-separated words
        :param min_num: smallest number of words kept
        :param max_num: largest number of words kept
        """
        super().__init__(**kwargs)
        self.min_num = min_num
        self.max_num = max_num
        setup_word_tokenizer(self, lang, tokenization)
        if not tokenization:  # load the compiled kernels here, once, so that forked workers share them
            repetition_numba.text_available()

    def _tokenize(self):
        return sentencepiece_words(self)

    def compute_stats_batched(self, samples, context=False):
        key = StatsKeys.num_words
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if key not in s]
        if not todo:
            return samples
        contexts = samples[Fields.context] if context else None
        if self.model_key is None and repetition_numba.text_available():
            # count in one compiled pass (no word list), except where the pass already split the text
            words_key = words_context_key(None, self.text_key)
            fresh = [i for i in todo if contexts is None or words_key not in contexts[i]]
            for i, n in zip(fresh, repetition_numba.count_words([samples[self.text_key][i] for i in fresh])):
                stats[i][key] = n
            if len(fresh) == len(todo):
                return samples
            todo = [i for i in todo if key not in stats[i]]
        if contexts is None and self.model_key is None:  # nothing to share: count without the words
            for i, n in zip(todo, count_words_batch([samples[self.text_key][i] for i in todo])):
                stats[i][key] = n
            return samples
        words_key = words_context_key(self.model_key, self.text_key)
        all_words = batch_words(samples[self.text_key], todo, contexts, words_key, self._tokenize())
        # the stripped words are kept for the other word filters of the pass (word_repetition_filter
        # lower-cases them instead of splitting and stripping the text again)
        stripped_key = (stripped_words_context_key(self.model_key, self.text_key)
                        if contexts is not None and self.model_key is None else None)
        texts = samples[self.text_key] if self.model_key is None else None  # plain split: words of the text
        for i, words in zip(todo, all_words):
            stripped = refine_words(words, text=texts[i] if texts is not None else None)
            stats[i][key] = len(stripped)
            if stripped_key is not None:
                contexts[i][stripped_key] = stripped
        return samples

    def process_batched(self, samples):
        lo, hi = self.min_num, self.max_num
        return [self.get_keep_boolean(s[StatsKeys.num_words], lo, hi) for s in samples[Fields.stats]]
