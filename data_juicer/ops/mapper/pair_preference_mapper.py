import re
from typing import ClassVar, Dict, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("pair_preference_mapper")
class PairPreferenceMapper(LLMOpMixin, Mapper):
    """Builds preference pairs: asks an API LLM for a response that contrasts with the sample's
    response (in style, facts, persona or stance), using the text as reference, plus the reason;
    writes them to ``rejected_key`` and ``reason_key``.

    ``input_template`` is filled with ``{query}``, ``{response}`` and ``{reference}`` (the text, or
    empty). The answer is matched with ``output_pattern`` (``re.DOTALL``; groups: new response,
    reason); both must be non-empty. After ``try_num`` attempts without both, the sample goes to
    the error ledger with the raw answer (Data-Juicer writes empty strings).
    """

    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "请参考给出的信息，改写问答对里的回答，使新回答在语言风格、事实、人物身份或立场等至少一个方面与原回答相反。"
        "严格按下面的标记格式输出，不要输出任何其他内容。\n"
        "【回答】\n新的回答\n【原因】\n为什么这样改写"
    )
    DEFAULT_INPUT_TEMPLATE: ClassVar[str] = (
        "【参考信息】\n{reference}\n\n原始问答对如下：\n【问题】\n{query}\n【回答】\n{response}"
    )
    DEFAULT_OUTPUT_PATTERN: ClassVar[str] = r".*?【回答】\s*(.*?)\s*【原因】\s*(.*)"

    def __init__(
        self,
        api_model: str = "gpt-4o",
        *,
        api_endpoint: Optional[str] = None,
        response_path: Optional[str] = None,
        system_prompt: Optional[str] = None,
        input_template: Optional[str] = None,
        output_pattern: Optional[str] = None,
        rejected_key: str = "rejected_response",
        reason_key: str = "reason",
        try_num: PositiveInt = 3,
        model_params: Dict = {},
        sampling_params: Dict = {},
        **kwargs,
    ):
        """
        :param api_model: API model name
        :param api_endpoint: path under the base URL or full URL of the chat endpoint
        :param response_path: dotted path of the text in the API answer
        :param system_prompt: system prompt
        :param input_template: user prompt template with ``{query}``, ``{response}``, ``{reference}``
        :param output_pattern: regex with two groups: the new response and the reason
        :param rejected_key: field the generated (rejected) response goes to
        :param reason_key: field the reason goes to
        :param try_num: attempts until an answer parses
        :param model_params: API client options (``base_url``, ``api_key``, ``timeout``, ``concurrency``, ...)
        :param sampling_params: generation settings sent with each request
        """
        super().__init__(**kwargs)
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.rejected_key = rejected_key
        self.reason_key = reason_key
        self.init_llm(model=api_model, kind="api", api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num)

    def build_input(self, sample: dict) -> str:
        return self.input_template.format_map({"query": sample[self.query_key], "response": sample[self.response_key],
                                               "reference": sample.get(self.text_key, "")})

    def parse_output(self, raw: str):
        m = re.match(self.output_pattern, raw, re.DOTALL)
        return (m.group(1).strip(), m.group(2).strip()) if m else ("", "")

    def _parse(self, raw: str):
        rejected, reason = self.parse_output(raw)
        return (rejected, reason) if rejected and reason else None

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        keys = list(samples)
        n = len(samples[keys[0]]) if keys else 0
        rows = [{k: samples[k][i] for k in keys} for i in range(n)]
        results = self.llm_parse([chat_messages(self.build_input(r), self.system_prompt) for r in rows], self._parse)
        samples[self.rejected_key] = [r[0] for r in results]
        samples[self.reason_key] = [r[1] for r in results]
        return samples
