from data_juicer.ops.base import Filter
from data_juicer.ops.common.special_tokens import remove_special_tokens
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys

# a token is an action when spaCy tags it as a verb both by part of speech and by fine tag
ACTION_POS = frozenset({"VERB"})
ACTION_TAGS = frozenset({"VV", "VB", "VBP", "VBZ", "VBD", "VBG", "VBN"})
SPACY_LANGS = ("en", "zh")


@OPERATORS.register_module("text_action_filter")
class TextActionFilter(Filter):
    """Keeps samples whose text holds at least min_action_num actions (verbs).

    The text, without multimodal special tokens, is tagged by the spaCy pipeline of ``lang``
    (Data-Juicer's ``en_core_web_md-3.7.0`` / ``zh_core_web_md-3.7.0``); the stat ``num_action``
    counts the tokens whose part of speech is ``VERB`` and whose tag is a verb tag (``VB*``,
    ``VV``). Texts are tagged in batches (``nlp.pipe``) without the parser, NER and lemmatizer,
    which do not change tags. Needs ``spacy`` and the model (see docs/models.md: an installed
    spaCy model package such as ``en_core_web_sm`` is used when the named one is not found).
    """

    requires = ("spacy",)

    def __init__(self, lang: str = "en", min_action_num: int = 1, **kwargs):
        """
        :param lang: language of the texts: ``en`` or ``zh``
        :param min_action_num: smallest number of actions kept
        """
        super().__init__(**kwargs)
        if lang not in SPACY_LANGS:
            raise ValueError(f"text_action_filter: lang '{lang}' is not supported; use one of {list(SPACY_LANGS)}")
        from data_juicer.models.nlp import check_spacy

        self.lang = lang
        self.min_action_num = min_action_num
        self.model_path = check_spacy(lang, who=self.name)

    def compute_stats_batched(self, samples):
        key = StatsKeys.num_action
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if key not in s]
        if not todo:
            return samples
        from data_juicer.models.nlp import load_spacy

        nlp = load_spacy(self.model_path, exclude=("parser", "ner", "lemmatizer"), who=self.name)
        texts = samples[self.text_key]
        docs = nlp.pipe(remove_special_tokens(texts[i]) for i in todo)
        for i, doc in zip(todo, docs):
            stats[i][key] = sum(1 for t in doc if t.pos_ in ACTION_POS and t.tag_ in ACTION_TAGS)
        return samples

    def process_batched(self, samples):
        lo = self.min_action_num
        return [self.get_keep_boolean(s[StatsKeys.num_action], lo) for s in samples[Fields.stats]]
