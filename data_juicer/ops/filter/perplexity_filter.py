from data_juicer.ops.base import Filter
from data_juicer.ops.common.text_words import batch_words, words_context_key
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("perplexity_filter")
class PerplexityFilter(Filter):
    """Keeps samples whose perplexity under a KenLM language model is within [min_ppl, max_ppl].

    The text is split into the pieces of the sentencepiece model ``<lang>.sp.model``, and the
    pieces, joined by spaces, are scored line by line by the KenLM model ``<lang>.arpa.bin``
    (Data-Juicer's Wikipedia models; any KenLM binary or ARPA file works). The stat
    ``perplexity`` is ``10 ** (-sum of log10 scores / (tokens + one end of sentence per line))``,
    rounded to one decimal (0.0 for an empty text). Needs ``sentencepiece``, ``kenlm`` (or the
    prebuilt ``ufal.kenlm``) and both model files in the model folder (see docs/models.md). When
    fused, the sentencepiece split is shared with the word filters through ``__dj__context__``.
    """

    requires = ("sentencepiece", "ufal.kenlm")
    uses = (InterVars.words,)

    def __init__(self, lang: str = "en", min_ppl: float = 0, max_ppl: float = 1500, **kwargs):
        """
        :param lang: language of the samples; picks ``<lang>.sp.model`` and ``<lang>.arpa.bin``
        :param min_ppl: smallest perplexity kept
        :param max_ppl: largest perplexity kept
        """
        super().__init__(**kwargs)
        from data_juicer.models.loader import check_sentencepiece
        from data_juicer.models.nlp import check_kenlm

        self.lang = lang
        self.min_ppl = min_ppl
        self.max_ppl = max_ppl
        self.model_key = check_sentencepiece(lang, who=self.name)
        self.kenlm_path = check_kenlm(lang, who=self.name)

    def compute_stats_batched(self, samples, context=False):
        key = StatsKeys.perplexity
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if key not in s]
        if not todo:
            return samples
        from data_juicer.models.loader import sentencepiece_tokenizer
        from data_juicer.models.nlp import load_kenlm

        contexts = samples[Fields.context] if context else None
        words_key = words_context_key(self.model_key, self.text_key)
        all_words = batch_words(samples[self.text_key], todo, contexts, words_key,
                                sentencepiece_tokenizer(self.lang, who=self.name))
        score = load_kenlm(self.kenlm_path, who=self.name).score
        for i, words in zip(todo, all_words):
            logits, length = 0.0, 0
            for line in " ".join(words).splitlines():
                logits += score(line)
                length += len(line.split()) + 1
            stats[i][key] = round(10.0 ** (-logits / length), 1) if length else 0.0
        return samples

    def process_batched(self, samples):
        lo, hi = self.min_ppl, self.max_ppl
        return [self.get_keep_boolean(s[StatsKeys.perplexity], lo, hi) for s in samples[Fields.stats]]
