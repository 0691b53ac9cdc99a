from typing import Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.models.llm.semantic import InferenceStrategy, add_usage, strategy_of
from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


SYSTEM_PROMPT = "You judge whether a text meets a condition. Reply with a single word: yes or no."
_ASK = "Does the text meet the condition? Reply yes or no."
_THINK = "Reason about the text and the condition step by step, then finish with yes or no."
_TEMPLATES = {
    InferenceStrategy.DIRECT: "# Text\n{text}\n\n# Condition\n{condition}\n\n" + _ASK,
    InferenceStrategy.COT: "# Text\n{text}\n\n# Condition\n{condition}\n\n" + _THINK,
    InferenceStrategy.FEW_SHOT: "# Examples\n{examples}\n\n# Text\n{text}\n\n# Condition\n{condition}\n\n" + _ASK,
    InferenceStrategy.COT_SHOT: "# Examples\n{examples}\n\n# Text\n{text}\n\n# Condition\n{condition}\n\n"
                                "Using the examples as a guide, reason step by step, then finish with yes or no.",
}


def condition_prompt(text: str, condition: str, grounding: Optional[str], strategy, examples: Optional[str]) -> str:
    body = _TEMPLATES[strategy_of(strategy)].format(text=text, condition=condition,
                                                                       examples=examples or "")
    return f"# Background\n{grounding}\n\n" + body if grounding else body


@OPERATORS.register_module("llm_condition_filter")
class LLMConditionFilter(LLMOpMixin, Filter):
    """Asks an LLM whether each sample's text meets a natural-language ``condition`` and keeps the
    samples it says yes to (stat ``llm_condition_filter_result``: the answer starts with "yes").

    An empty text is False and an empty condition True, without asking. Grounding knowledge (per
    sample from ``knowledge_grounding_key`` or fixed) and examples (few-shot strategies) go into
    the prompt. ``llm_semantic_usage`` adds up the tokens the server reported (``prompt_tokens``,
    ``completion_tokens``, ``total_tokens``, ``cost_estimate``). An empty answer is asked again, up
    to ``try_num`` times; then the sample goes to the error ledger (Data-Juicer records False).
    """

    _accelerator = "cuda"

    def __init__(
        self,
        text_key: str = "text",
        condition: str = "",
        api_or_hf_model: str = "gpt-4o",
        *,
        knowledge_grounding_key: Optional[str] = None,
        knowledge_grounding_fixed: Optional[str] = None,
        is_hf_model: bool = False,
        enable_vllm: bool = False,
        api_endpoint: Optional[str] = None,
        response_path: Optional[str] = None,
        strategy: Optional[InferenceStrategy] = None,
        examples: Optional[str] = None,
        try_num: PositiveInt = 3,
        model_params: Optional[dict] = None,
        sampling_params: Optional[dict] = None,
        **kwargs,
    ):
        """
        :param text_key: field of the text judged
        :param condition: the condition in natural language (e.g. "is about cooking")
        :param api_or_hf_model: API model name, or a Hugging Face model (``is_hf_model`` / ``enable_vllm``)
        :param knowledge_grounding_key: field with background knowledge for each sample
        :param knowledge_grounding_fixed: background knowledge for every sample (wins over the key)
        :param is_hf_model: generate with ``transformers`` in this process
        :param enable_vllm: generate with an in-process vLLM engine
        :param api_endpoint: path under the base URL or full URL of the chat endpoint
        :param response_path: dotted path of the text in the API answer
        :param strategy: ``direct``, ``cot``, ``few_shot`` or ``cot_shot``
        :param examples: example texts with their answers (few-shot strategies)
        :param try_num: attempts until a non-empty answer
        :param model_params: API client options or HF / vLLM model arguments
        :param sampling_params: generation settings sent with each request
        """
        super().__init__(text_key=text_key, **kwargs)
        self.condition = condition
        self.knowledge_grounding_key = knowledge_grounding_key
        self.knowledge_grounding_fixed = knowledge_grounding_fixed
        self.strategy = strategy_of(strategy) if strategy else None
        self.examples = examples
        if not (enable_vllm or is_hf_model):
            self.accelerator = "cpu"
        self.init_llm(model=api_or_hf_model, enable_vllm=enable_vllm, is_hf_model=is_hf_model,
                      api_endpoint=api_endpoint, response_path=response_path, model_params=model_params,
                      sampling_params=sampling_params, try_num=try_num)

    def _grounding(self, sample: dict) -> Optional[str]:
        if self.knowledge_grounding_fixed:
            return self.knowledge_grounding_fixed
        key = self.knowledge_grounding_key
        if key and sample.get(key) is not None:
            return str(sample[key])
        return None

    @staticmethod
    def parse(raw: str):
        text = (raw or "").strip()
        if not text:
            return None
        low = text.lower()
        return low.startswith("yes") or low == "y", getattr(raw, "usage", None)

    def compute_stats_batched(self, samples, context=False):
        stats = samples[Fields.stats]
        keys = list(samples)
        todo, msgs = [], []
        for i in range(len(stats)):
            if StatsKeys.llm_condition_filter_result in stats[i]:
                continue
            row = {k: samples[k][i] for k in keys}
            text = "" if row.get(self.text_key) is None else str(row[self.text_key]).strip()
            if not text:
                stats[i][StatsKeys.llm_condition_filter_result] = False
            elif not self.condition:
                stats[i][StatsKeys.llm_condition_filter_result] = True
            else:
                todo.append(i)
                msgs.append(chat_messages(condition_prompt(text, self.condition, self._grounding(row),
                                                           self.strategy, self.examples), SYSTEM_PROMPT))
        if todo:
            for i, (result, usage) in zip(todo, self.llm_parse(msgs, self.parse)):
                stats[i][StatsKeys.llm_condition_filter_result] = result
                stats[i][StatsKeys.llm_semantic_usage] = add_usage(stats[i].get(StatsKeys.llm_semantic_usage), usage)
        return samples

    def process_single(self, sample: dict) -> bool:
        return bool(sample[Fields.stats].get(StatsKeys.llm_condition_filter_result, False))
