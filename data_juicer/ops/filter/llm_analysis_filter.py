import json
import re
from typing import Any, ClassVar, Dict, List, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys

_OUTER_BRACES = re.compile(r"(\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})")

_LANG_NAMES = {"zh": "Chinese (简体中文)", "en": "English"}


def output_language_note(lang: Optional[str]) -> str:
    """A system-prompt appendix asking for free-text fields in ``lang`` (JSON keys stay English)."""
    if lang is None or not str(lang).strip():
        return ""
    name = _LANG_NAMES.get(str(lang).strip().lower()[:2], str(lang).strip())
    return (f"\n\nWrite every free-text value (rationale, tags, flags) in {name}; keep the JSON keys and "
            f"the recommendation values exactly as specified, in English.")


@OPERATORS.register_module("llm_analysis_filter")
class LLMAnalysisFilter(LLMOpMixin, Filter):
    """Asks an LLM to grade each sample on several dimensions (1-5), tag it and recommend keep /
    review / discard; keeps samples whose normalised mean score is in [min_score, max_score].

    The prompt lists the sample's ``input_keys`` (named by ``field_names``); the answer must
    contain a JSON object with ``dimension_scores`` (and optionally ``tags``, ``flags``,
    ``rationale``, ``recommendation``). The score is the mean of the ``dim_required_keys``
    dimensions divided by 5. Stats: ``llm_analysis_score`` (float), ``llm_analysis_record`` (the
    parsed JSON, as a JSON string) and ``llm_analysis_tags`` (a JSON string). As Data-Juicer, a
    score of 0.0 (no dimension scores) keeps the sample. Unlike Data-Juicer, a sample whose
    answer never parses in ``try_num`` attempts is not kept with a 0.0 score: it goes to the
    error ledger with the raw answer. Base class of the other LLM scoring filters.
    """

    _accelerator = "cuda"

    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "You review samples of training data for language models. Judge the sample you are given on "
        "each of these dimensions, with an integer from 1 (worst) to 5 (best):\n"
        "- clarity: is it easy to understand?\n"
        "- relevance: does it stay on its task or topic?\n"
        "- usefulness: how much value does its information carry?\n"
        "- fluency: is it well written (grammar, style)?\n"
        "Also give tags that describe it (its topic and its style), flags for problems you notice, a "
        "short rationale grounded in the text, and a recommendation: keep, review or discard. "
        "Misinformation weighs heavily against a sample.\n"
        "Answer with one JSON object and nothing else, shaped like:\n"
        '{"dimension_scores": {"clarity": 4, "relevance": 5, "usefulness": 3, "fluency": 4}, '
        '"tags": {"topic": "Astronomy", "style": "Explanatory"}, "flags": ["minor_typos"], '
        '"rationale": "Clear and on topic, a little thin on detail.", "recommendation": ["keep"]}'
    )
    DEFAULT_INPUT_TEMPLATE: ClassVar[str] = "# Data\n'''\n{data}\n'''\n\n# Response\njson\n"
    DEFAULT_FIELD_TEMPLATE: ClassVar[str] = "**{field_name}**\n{field_data}"
    DEFAULT_DIM_REQUIRED_KEYS: ClassVar[list] = ["clarity", "relevance", "usefulness", "fluency"]
    SCORE_KEY: ClassVar[str] = StatsKeys.llm_analysis_score
    RECORD_KEY: ClassVar[str] = StatsKeys.llm_analysis_record
    TAGS_KEY: ClassVar[str] = StatsKeys.llm_analysis_tags

    def __init__(
        self,
        api_or_hf_model: str = "gpt-4o",
        min_score: float = 0.5,
        max_score: float = 1.0,
        is_hf_model: bool = False,
        *,
        api_endpoint: Optional[str] = None,
        response_path: Optional[str] = None,
        input_keys: List[str] = ["text"],
        field_names: List[str] = ["Text"],
        system_prompt: Optional[str] = None,
        input_template: Optional[str] = None,
        field_template: Optional[str] = None,
        try_num: PositiveInt = 3,
        enable_vllm: bool = False,
        model_params: Dict = {},
        sampling_params: Dict = {},
        dim_required_keys: Optional[List[str]] = None,
        preferred_output_lang: Optional[str] = None,
        **kwargs,
    ):
        """
        :param api_or_hf_model: API model name, or a Hugging Face model (with ``is_hf_model`` or
            ``enable_vllm``)
        :param min_score: lowest normalised score (0-1) kept
        :param max_score: highest normalised score (0-1) kept
        :param is_hf_model: generate with ``transformers`` in this process
        :param api_endpoint: path under the base URL or full URL of the chat endpoint
        :param response_path: dotted path of the text in the API answer
            (default ``choices.0.message.content``)
        :param input_keys: sample fields shown to the model
        :param field_names: the name shown for each of ``input_keys``
        :param system_prompt: system prompt (default: a grading rubric asking for JSON)
        :param input_template: user prompt template with ``{data}``
        :param field_template: template of each field with ``{field_name}`` and ``{field_data}``
        :param try_num: attempts until an answer parses
        :param enable_vllm: generate with an in-process vLLM engine
        :param model_params: API client options (``base_url``, ``api_key``, ``timeout``,
            ``max_retries``, ``concurrency``), or the HF / vLLM model arguments
        :param sampling_params: generation settings sent with each request (e.g. ``temperature``)
        :param dim_required_keys: the dimensions averaged into the score
        :param preferred_output_lang: language of the free-text parts of the answer (e.g. ``zh``)
        """
        super().__init__(**kwargs)
        if len(input_keys) != len(field_names):
            raise ValueError(f"{self.name}: input_keys {input_keys} and field_names {field_names} must have the "
                             f"same length (one name per field)")
        self.api_or_hf_model = api_or_hf_model
        self.min_score = min_score
        self.max_score = max_score
        self.is_hf_model = is_hf_model
        self.enable_vllm = enable_vllm
        self.input_keys = list(input_keys)
        self.field_names = list(field_names)
        self.system_prompt = (system_prompt or self.DEFAULT_SYSTEM_PROMPT) + output_language_note(
            preferred_output_lang)
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.field_template = field_template or self.DEFAULT_FIELD_TEMPLATE
        self.dim_required_keys = dim_required_keys or list(self.DEFAULT_DIM_REQUIRED_KEYS)
        self.preferred_output_lang = preferred_output_lang
        if not (enable_vllm or is_hf_model):
            self.accelerator = "cpu"
        self.init_llm(model=api_or_hf_model, enable_vllm=enable_vllm, is_hf_model=is_hf_model,
                      api_endpoint=api_endpoint, response_path=response_path, model_params=model_params,
                      sampling_params=sampling_params, try_num=try_num)

    def build_input(self, sample: dict) -> str:
        fields = [self.field_template.format(field_name=n, field_data=sample[k])
                  for k, n in zip(self.input_keys, self.field_names) if k in sample]
        return self.input_template.format(data="\n\n".join(fields))

    def build_messages(self, sample: dict) -> list:
        return chat_messages(self.build_input(sample), self.system_prompt)

    def parse_output(self, raw: str):
        """``(score, record, tags)`` of an answer; None when it holds no usable JSON object."""
        m = _OUTER_BRACES.search(raw or "")
        if not m:
            return None
        try:
            data = json.loads(m.group(1))
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        data["recommendation"] = _str_list(data.get("recommendation"))
        dims = data.get("dimension_scores")
        score = 0.0
        if dims and self.dim_required_keys:
            try:
                score = sum(float(dims[k]) for k in self.dim_required_keys) / len(self.dim_required_keys) / 5
            except (KeyError, TypeError, ValueError):
                return None  # a required dimension missing or not a number: ask again
        return score, data, data.get("tags")

    def compute_stats_batched(self, samples: dict[str, list], context: bool = False) -> dict[str, list]:
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if self.SCORE_KEY not in s]
        if not todo:
            return samples
        keys = list(samples)
        rows = [{k: samples[k][i] for k in keys} for i in todo]
        results = self.llm_parse([self.build_messages(r) for r in rows], self.parse_output)
        for i, (score, record, tags) in zip(todo, results):
            stats[i][self.SCORE_KEY] = score
            stats[i][self.RECORD_KEY] = json.dumps(record, ensure_ascii=False)
            stats[i][self.TAGS_KEY] = _tags_str(tags)
        return samples

    def process_single(self, sample: dict) -> bool:
        score = sample[Fields.stats].get(self.SCORE_KEY, 0.0)
        return self.get_keep_boolean(score, self.min_score, self.max_score) if score else True


def _str_list(val: Any) -> list:
    if val is None:
        return []
    if isinstance(val, (list, tuple)):
        return [str(x).strip() for x in val if x is not None and str(x).strip()]
    s = str(val).strip()
    return [s] if s else []


def _tags_str(tags: Any) -> str:
    if tags is None:
        return ""
    if isinstance(tags, str):
        return tags
    try:
        return json.dumps(tags, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(tags)
