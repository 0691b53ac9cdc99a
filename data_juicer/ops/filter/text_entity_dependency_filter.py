from data_juicer.ops.base import Filter
from data_juicer.ops.common.special_tokens import remove_special_tokens
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys

# a token is an entity when spaCy tags it as a noun or pronoun both by part of speech and by tag
ENTITY_POS = frozenset({"NOUN", "PROPN", "PRON"})
ENTITY_TAGS = frozenset({"NN", "NR", "PN", "NNS", "NNP", "NNPS", "PRP"})
SPACY_LANGS = ("en", "zh")


def dependency_edges(doc) -> list[int]:
    """Edges of each entity token of a parsed spaCy ``doc`` in its dependency tree, in text order:
    one to its head (unless it is the root) plus one from each non-punctuation dependent."""
    edges = {t.i: int(t.dep_ != "ROOT") for t in doc if t.pos_ in ENTITY_POS and t.tag_ in ENTITY_TAGS}
    if edges:
        for t in doc:
            h = t.head.i
            if h in edges and t.pos_ != "PUNCT" and t.dep_ != "ROOT":
                edges[h] += 1
    return list(edges.values())


@OPERATORS.register_module("text_entity_dependency_filter")
class TextEntityDependencyFilter(Filter):
    """Keeps samples whose entities are tied into the sentence: each (``all``) or some (``any``)
    entity has at least min_dependency_num edges in the dependency tree.

    The text, without multimodal special tokens, is parsed by the spaCy pipeline of ``lang``
    (Data-Juicer's ``en_core_web_md-3.7.0`` / ``zh_core_web_md-3.7.0``). Entities are tokens
    tagged as nouns or pronouns; an entity's edges are the one to its head (unless it is the
    root) and one per dependent that is not punctuation. The stat ``num_dependency_edges`` is
    the list of edge counts; a sample without entities is dropped. Texts are parsed in batches
    (``nlp.pipe``) without NER and lemmatizer. Needs ``spacy`` and the model (see docs/models.md).
    """

    requires = ("spacy",)

    def __init__(self, lang: str = "en", min_dependency_num: int = 1, any_or_all: str = "all", **kwargs):
        """
        :param lang: language of the texts: ``en`` or ``zh``
        :param min_dependency_num: fewest dependency edges for an entity to count as tied in
        :param any_or_all: keep a sample when ``any`` entity is tied in, or only when ``all`` are
        """
        super().__init__(**kwargs)
        if lang not in SPACY_LANGS:
            raise ValueError(f"text_entity_dependency_filter: lang '{lang}' is not supported; "
                             f"use one of {list(SPACY_LANGS)}")
        if any_or_all not in ("any", "all"):
            raise ValueError(f"text_entity_dependency_filter: any_or_all must be 'any' or 'all', not {any_or_all!r}")
        from data_juicer.models.nlp import check_spacy

        self.lang = lang
        self.min_dependency_num = min_dependency_num
        self.any = any_or_all == "any"
        self.model_path = check_spacy(lang, who=self.name)

    def compute_stats_batched(self, samples):
        key = StatsKeys.num_dependency_edges
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if key not in s]
        if not todo:
            return samples
        from data_juicer.models.nlp import load_spacy

        nlp = load_spacy(self.model_path, exclude=("ner", "lemmatizer"), who=self.name)
        texts = samples[self.text_key]
        for i, doc in zip(todo, nlp.pipe(remove_special_tokens(texts[i]) for i in todo)):
            stats[i][key] = dependency_edges(doc)
        return samples

    def process_batched(self, samples):
        lo, pick = self.min_dependency_num, any if self.any else all
        return [bool(edges) and pick(self.get_keep_boolean(n, lo) for n in edges)
                for edges in (s[StatsKeys.num_dependency_edges] for s in samples[Fields.stats])]
