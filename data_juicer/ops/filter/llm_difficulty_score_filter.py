from typing import ClassVar

from data_juicer.ops.filter.llm_analysis_filter import LLMAnalysisFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


@OPERATORS.register_module("llm_difficulty_score_filter")
class LLMDifficultyScoreFilter(LLMAnalysisFilter):
    """Asks an LLM how difficult each sample is (linguistic complexity, conceptual depth, prior
    knowledge, step complexity, ambiguity; 1-5 each) and keeps samples whose normalised mean (stat
    ``llm_difficulty_score``) is in [min_score, max_score]; ``llm_difficulty_record`` and
    ``llm_difficulty_tags`` hold the parsed answer.

    Parameters and parsing as ``llm_analysis_filter``; a 0.0 score is judged against the range
    like any other (as Data-Juicer).
    """

    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "You assess how demanding training samples for language models are. Rate the sample on each "
        "dimension with an integer from 1 (a beginner could handle it) to 5 (needs an expert):\n"
        "- linguistic_complexity: vocabulary and sentence structure\n"
        "- conceptual_depth: how abstract or theoretical it is\n"
        "- prior_knowledge: how much domain knowledge it assumes\n"
        "- step_complexity: how many reasoning or solution steps it needs\n"
        "- ambiguity: how many valid readings it allows\n"
        "Explain briefly and flag anything notable.\n"
        "Answer with one JSON object and nothing else, shaped like:\n"
        '{"dimension_scores": {"linguistic_complexity": 3, "conceptual_depth": 4, "prior_knowledge": 4, '
        '"step_complexity": 2, "ambiguity": 1}, "flags": ["specialist_terms"], '
        '"rationale": "Needs some physics background but few steps.", "recommendation": ["keep"]}'
    )
    DEFAULT_DIM_REQUIRED_KEYS: ClassVar[list] = ["linguistic_complexity", "conceptual_depth", "prior_knowledge",
                                                 "step_complexity", "ambiguity"]
    SCORE_KEY: ClassVar[str] = StatsKeys.llm_difficulty_score
    RECORD_KEY: ClassVar[str] = StatsKeys.llm_difficulty_record
    TAGS_KEY: ClassVar[str] = StatsKeys.llm_difficulty_tags

    def process_single(self, sample: dict) -> bool:
        return self.get_keep_boolean(sample[Fields.stats][self.SCORE_KEY], self.min_score, self.max_score)
