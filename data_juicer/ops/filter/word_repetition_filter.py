from collections import Counter
from operator import countOf

import numpy as np
from pydantic import PositiveInt

from data_juicer.ops.base import Filter
from data_juicer.ops.common import repetition_numba
from data_juicer.ops.common.text_words import (
    batch_words,
    lower_commutes,
    lower_refined_words,
    lower_stripped,
    refine_words,
    refined_words_context_key,
    sentencepiece_words,
    setup_word_tokenizer,
    stripped_words_context_key,
    words_context_key,
)
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


def word_rep_ratio(words: list[str], n: int) -> float:
    """Share of the word n-grams of ``words`` that occur more than once (0.0 when fewer than ``n`` words)."""
    total = len(words) - n + 1
    if total <= 0:
        return 0.0
    if n == 1:
        grams = words
    else:  # n-grams keyed by their space-joined text, as Data-Juicer does
        grams = map(" ".join, map(words.__getitem__, map(slice, range(total), range(n, len(words) + 1))))
    return (total - countOf(Counter(grams).values(), 1)) / total


_MIX = np.uint64(0x9E3779B97F4A7C15)


def word_rep_ratio_fast(words: list[str], n: int, spaces_possible: bool = True) -> float:
    """``word_rep_ratio`` in numpy: n-grams become 64-bit hashes of their words' hashes and are
    counted after a sort (only a 64-bit hash collision could make the two differ). Words holding
    a space would make space-joined n-grams ambiguous, so those texts take the exact path
    (``spaces_possible=False``: the words come from a split on spaces and cannot hold one)."""
    total = len(words) - n + 1
    if total < 64 or n == 1 or (spaces_possible and any(" " in w for w in words)):
        return word_rep_ratio(words, n)
    hashes = np.fromiter(map(hash, words), dtype=np.int64, count=len(words)).view(np.uint64)
    h = hashes[:total].copy()
    for j in range(1, n):
        h *= _MIX
        h ^= hashes[j:j + total]
    h.sort()
    new = np.concatenate(([True], h[1:] != h[:-1], [True]))
    starts = np.flatnonzero(new)
    singles = int(np.count_nonzero(np.diff(starts) == 1))
    return (total - singles) / total


def word_rep_ratios(word_lists: list[list[str]], n: int, spaces_possible: bool = True) -> list[float]:
    """``word_rep_ratio_fast`` of each word list; the lists it hashes go through one compiled
    call (``repetition_numba``: C or numba) when one is usable, with the same hashes and so the same ratios."""
    out = [None] * len(word_lists)
    hashed = []
    for j, words in enumerate(word_lists):
        if len(words) - n + 1 < 64 or n == 1 or (spaces_possible and any(" " in w for w in words)):
            out[j] = word_rep_ratio(words, n)
        else:
            hashed.append(j)
    if hashed:
        from data_juicer.ops.common import repetition_numba

        if repetition_numba.word_available():
            ratios = repetition_numba.word_rep_ratios([word_lists[j] for j in hashed], n).tolist()
        else:
            ratios = [word_rep_ratio_fast(word_lists[j], n, spaces_possible=False) for j in hashed]
        for j, r in zip(hashed, ratios):
            out[j] = r
    return out


@OPERATORS.register_module("word_repetition_filter")
class WordRepetitionFilter(Filter):
    """Keeps samples whose word n-gram repetition ratio (stat ``word_rep_ratio``: n-grams that
    occur more than once / all n-grams of ``rep_len`` words) is within [min_ratio, max_ratio].

    Words are split on space, newline and tab, or are the pieces of the sentencepiece model
    ``<lang>.sp.model`` when ``tokenization=True`` (needs ``sentencepiece`` and the model file:
    see ``data_juicer.models.loader``); they are lower-cased and stripped of special characters
    at both ends, and emptied words dropped. Without tokenization the ratios come from one
    compiled pass over the lower-cased texts' code points (a C library built with the machine's C
    compiler, else numba; words compared by a 64-bit hash of their code points, so the counts are
    exact barring a hash collision); otherwise, and without either, the word lists are shared
    through ``__dj__context__`` when fused.
    """

    uses = (InterVars.words,)

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        return ("sentencepiece",) if params.get("tokenization") else ()

    def __init__(self, lang: str = "en", tokenization: bool = False, rep_len: PositiveInt = 10,
                 min_ratio: float = 0.0, max_ratio: float = 0.5, **kwargs):
        """
        :param lang: language of the samples; picks the sentencepiece model when tokenizing
        :param tokenization: use sentencepiece pieces as words instead of whitespace-separated words
        :param rep_len: length in words of the n-grams
        :param min_ratio: smallest repetition ratio kept
        :param max_ratio: largest repetition ratio kept
        """
        super().__init__(**kwargs)
        if not isinstance(rep_len, int) or isinstance(rep_len, bool) or rep_len < 1:
            raise ValueError(f"word_repetition_filter: rep_len must be a positive integer, got {rep_len!r}")
        self.rep_len = rep_len
        self.min_ratio = min_ratio
        self.max_ratio = max_ratio
        setup_word_tokenizer(self, lang, tokenization)
        if not tokenization:  # load the compiled kernels here, once, so that forked workers share them
            repetition_numba.text_available()

    def _tokenize(self):
        return sentencepiece_words(self)

    def compute_stats_batched(self, samples, context=False):
        key = StatsKeys.word_rep_ratio
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if key not in s]
        if not todo:
            return samples
        texts = samples[self.text_key]
        plain = self.model_key is None
        contexts = samples[Fields.context] if context else None
        refined_key = refined_words_context_key(self.model_key, self.text_key)
        if plain and repetition_numba.text_available():
            # one compiled pass over the lower-cased texts (no word lists), except where the pass already
            # holds this text's words
            shared = (refined_key, words_context_key(None, self.text_key),
                      stripped_words_context_key(None, self.text_key))
            fast = [i for i in todo if (contexts is None or not any(k in contexts[i] for k in shared))
                    and lower_commutes(texts[i])]
            if fast:
                for i, ratio in zip(fast, repetition_numba.text_word_rep_ratios([texts[i].lower() for i in fast],
                                                                                self.rep_len)):
                    stats[i][key] = ratio
                if len(fast) == len(todo):
                    return samples
                todo = [i for i in todo if key not in stats[i]]
        if contexts is not None and plain:  # lower-case the stripped words another filter left
            stripped_key = stripped_words_context_key(self.model_key, self.text_key)
            for i in todo:
                ctx = contexts[i]
                if refined_key not in ctx and stripped_key in ctx:
                    words = lower_stripped(texts[i], ctx[stripped_key])
                    if words is not None:
                        ctx[refined_key] = words
        words_key = words_context_key(self.model_key, self.text_key)
        pending = []  # (row, words) whose ratio is still to compute
        if plain and contexts is None:  # no split to share: lower-case the whole text, then split and strip it
            for i in todo:
                words = lower_refined_words(texts[i])
                if words is not None:
                    pending.append((i, words))
        done = {i for i, _ in pending}
        todo = [i for i in todo if i not in done]
        # refined words already in the context need no raw words
        need_raw = [i for i in todo if contexts is None or refined_key not in contexts[i]]
        raw = dict(zip(need_raw, batch_words(texts, need_raw, contexts, words_key, self._tokenize())))
        for i in todo:
            if i in raw:
                words = refine_words(raw[i], lower_case=True)
                if contexts is not None:
                    contexts[i][refined_key] = words
            else:
                words = contexts[i][refined_key]
            pending.append((i, words))
        for i, ratio in zip((i for i, _ in pending), word_rep_ratios([w for _, w in pending], self.rep_len,
                                                                     spaces_possible=not plain)):
            stats[i][key] = ratio
        return samples

    def process_batched(self, samples):
        lo, hi = self.min_ratio, self.max_ratio
        return [self.get_keep_boolean(s[StatsKeys.word_rep_ratio], lo, hi) for s in samples[Fields.stats]]
