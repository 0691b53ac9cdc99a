from typing import ClassVar, Dict, List, Optional

from data_juicer.ops.filter.llm_analysis_filter import LLMAnalysisFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


@OPERATORS.register_module("llm_task_relevance_filter")
class LLMTaskRelevanceFilter(LLMAnalysisFilter):
    """Asks an LLM how useful each sample would be for a downstream task, described by
    ``task_desc`` and/or shown by examples from ``valid_dataset`` (the first ``n_shot``), on five
    dimensions (topical relevance, linguistic style match, task match, knowledge alignment,
    potential utility; 1-5 each); keeps samples whose normalised mean (stat
    ``llm_task_relevance``) is at least ``min_score``. A 0.0 score keeps the sample (as
    Data-Juicer). Other parameters (``api_endpoint``, ``model_params``, ``try_num``, ...) as
    ``llm_analysis_filter``. Without ``valid_dataset`` and ``task_desc``,
    :meth:`prepare_valid_feature` must be called before the op runs.
    """

    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "You decide whether a training sample would help a language model on a downstream task. The task "
        "is given in the user message by a description and/or validation examples. Rate the sample on "
        "each dimension with an integer from 1 (not at all) to 5 (fully):\n"
        "- topical_relevance: does its subject match the validation data?\n"
        "- linguistic_style_match: do its style, tone and complexity match?\n"
        "- task_match: does it solve the same kind of task?\n"
        "- knowledge_alignment: does it need the same kind of knowledge or reasoning?\n"
        "- potential_utility: would training on it likely help on the validation data?\n"
        "Judge alignment with the task, not general quality; an unrelated sample gets 1s. Base everything "
        "on the actual text.\n"
        "Answer with one JSON object and nothing else, shaped like:\n"
        '{"dimension_scores": {"topical_relevance": 2, "linguistic_style_match": 3, "task_match": 1, '
        '"knowledge_alignment": 2, "potential_utility": 1}, "flags": ["task_irrelevant"], '
        '"rationale": "A history essay; the task is math word problems."}'
    )
    DEFAULT_DIM_REQUIRED_KEYS: ClassVar[list] = ["topical_relevance", "linguistic_style_match", "task_match",
                                                 "knowledge_alignment", "potential_utility"]
    SCORE_KEY: ClassVar[str] = StatsKeys.llm_task_relevance
    RECORD_KEY: ClassVar[str] = StatsKeys.llm_task_relevance_record
    TAGS_KEY: ClassVar[str] = StatsKeys.llm_task_relevance_tags

    def __init__(
        self,
        api_or_hf_model: str = "gpt-4o",
        min_score: float = 0.5,
        is_hf_model: bool = False,
        *,
        valid_dataset: Optional[List[Dict]] = None,
        task_desc: Optional[str] = None,
        n_shot: Optional[int] = None,
        **kwargs,
    ):
        """
        :param api_or_hf_model: API model name, or a Hugging Face model (with ``is_hf_model``)
        :param min_score: lowest normalised score (0-1) kept
        :param is_hf_model: generate with ``transformers`` in this process
        :param valid_dataset: validation samples (dicts with the ``input_keys``) shown as examples
        :param task_desc: a description of the downstream task
        :param n_shot: how many validation samples to show (default: all)
        :param max_score: not used (only ``min_score`` bounds the score)
        """
        super().__init__(api_or_hf_model, min_score, 1.0, is_hf_model, **kwargs)
        self.valid_info: Optional[str] = None
        if valid_dataset is not None or task_desc is not None:
            self.prepare_valid_feature(valid_dataset, task_desc, n_shot)

    def prepare_valid_feature(self, dataset=None, task_desc: Optional[str] = None, n_shot: Optional[int] = None):
        """Build the task block of the prompt from validation samples and/or a description."""
        block = ""
        if task_desc is not None:
            block += f"# Task Description\n{task_desc}\n\n"
        rows = list(dataset)[: n_shot or None] if dataset is not None else []
        if rows:
            shown = []
            for row in rows:
                fields = [self.field_template.format(field_name=n, field_data=row[k])
                          for k, n in zip(self.input_keys, self.field_names) if k in row]
                shown.append("'''\n" + "\n\n".join(fields) + "\n'''")
            block += "# Validation Data\n" + "\n\n".join(shown) + "\n\n"
        if not block:
            raise ValueError(f"{self.name}: the validation information is empty; give `valid_dataset` "
                             f"(non-empty) or `task_desc`")
        self.valid_info = block

    def build_input(self, sample: dict) -> str:
        if self.valid_info is None:
            raise ValueError(f"{self.name}: no validation task; set `valid_dataset` or `task_desc` in the recipe "
                             f"(or call prepare_valid_feature) before running it")
        return self.valid_info + super().build_input(sample)

    def compute_stats_batched(self, samples, context=False):
        stats = samples[Fields.stats]
        for s in stats:  # Data-Juicer recomputes a negative score
            if s.get(self.SCORE_KEY, -1) < 0:
                s.pop(self.SCORE_KEY, None)
        return super().compute_stats_batched(samples, context)

    def process_single(self, sample: dict) -> bool:
        score = sample[Fields.stats].get(self.SCORE_KEY, 0.0)
        return self.get_keep_boolean(score, self.min_score, None) if score else True


def _merged_param_doc(own: str, parent: str) -> str:
    """``own`` plus the parent's ``:param x:`` entries it does not document itself."""
    import re

    have = set(re.findall(r":param (\w+):", own))
    extra = [blk for blk in re.split(r"\n(?=\s*:param )", parent) if (m := re.search(r":param (\w+):", blk))
             and m.group(1) not in have]
    return own.rstrip() + "\n" + "\n".join(extra) + "\n"


LLMTaskRelevanceFilter.__init__.__doc__ = _merged_param_doc(LLMTaskRelevanceFilter.__init__.__doc__,
                                                            LLMAnalysisFilter.__init__.__doc__)
