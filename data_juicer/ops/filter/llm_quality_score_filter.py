from typing import ClassVar

from data_juicer.ops.filter.llm_analysis_filter import LLMAnalysisFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


@OPERATORS.register_module("llm_quality_score_filter")
class LLMQualityScoreFilter(LLMAnalysisFilter):
    """Asks an LLM to grade each sample's quality (accuracy, grammar, informativeness, coherence,
    1-5 each) and keeps samples whose normalised mean (stat ``llm_quality_score``) is in
    [min_score, max_score]; ``llm_quality_record`` and ``llm_quality_tags`` hold the parsed answer.

    Parameters and parsing as ``llm_analysis_filter``; unlike it (and as Data-Juicer), a 0.0
    score is judged against the range like any other.
    """

    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "You check the quality of training data for language models. Grade the sample on each dimension "
        "with an integer from 1 (poor) to 5 (excellent):\n"
        "- accuracy: are its facts correct and checkable?\n"
        "- grammar: is the language correct and fluent?\n"
        "- informativeness: how much useful content does it carry?\n"
        "- coherence: is it logically structured and consistent?\n"
        "Ground every score in the text; unverified medical or legal claims and made-up facts count "
        "heavily against it. Flag problems and recommend keep, review or discard.\n"
        "Answer with one JSON object and nothing else, shaped like:\n"
        '{"dimension_scores": {"accuracy": 5, "grammar": 4, "informativeness": 3, "coherence": 4}, '
        '"flags": ["shallow"], "rationale": "Correct and readable but brief.", "recommendation": ["keep"]}'
    )
    DEFAULT_DIM_REQUIRED_KEYS: ClassVar[list] = ["accuracy", "grammar", "informativeness", "coherence"]
    SCORE_KEY: ClassVar[str] = StatsKeys.llm_quality_score
    RECORD_KEY: ClassVar[str] = StatsKeys.llm_quality_record
    TAGS_KEY: ClassVar[str] = StatsKeys.llm_quality_tags

    def process_single(self, sample: dict) -> bool:
        return self.get_keep_boolean(sample[Fields.stats][self.SCORE_KEY], self.min_score, self.max_score)
