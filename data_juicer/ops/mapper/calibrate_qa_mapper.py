import re
from typing import ClassVar, Dict, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("calibrate_qa_mapper")
class CalibrateQAMapper(LLMOpMixin, Mapper):
    """Asks an API LLM to correct each query/response pair against the sample's text (the
    reference), making both more accurate and detailed, and writes them back.

    The prompt is ``input_template`` with ``{reference}`` (``reference_template`` of the text) and
    ``{qa_pair}`` (``qa_pair_template`` of query and response). The answer is matched from its
    start with ``output_pattern`` (no ``re.DOTALL``, as Data-Juicer: the answer group stops at the
    first line break). A part that did not come back is left as it was; an answer matching
    neither part in ``try_num`` attempts sends the sample to the error ledger with the raw answer.
    """

    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "请对照【参考信息】核对并修正下面的【问题】和【回答】，使两者更准确、更详尽。\n"
        "按如下格式输出：\n【问题】\n修正后的问题\n【回答】\n修正后的回答"
    )
    DEFAULT_INPUT_TEMPLATE: ClassVar[str] = "{reference}\n{qa_pair}"
    DEFAULT_REFERENCE_TEMPLATE: ClassVar[str] = "【参考信息】\n{}"
    DEFAULT_QA_PAIR_TEMPLATE: ClassVar[str] = "【问题】\n{}\n【回答】\n{}"
    DEFAULT_OUTPUT_PATTERN: ClassVar[str] = r"【问题】\s*(.*?)\s*【回答】\s*(.*)"

    def __init__(
        self,
        api_model: str = "gpt-4o",
        *,
        api_endpoint: Optional[str] = None,
        response_path: Optional[str] = None,
        system_prompt: Optional[str] = None,
        input_template: Optional[str] = None,
        reference_template: Optional[str] = None,
        qa_pair_template: Optional[str] = None,
        output_pattern: Optional[str] = None,
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
        :param input_template: user prompt template with ``{reference}`` and ``{qa_pair}``
        :param reference_template: template of the reference text, one ``{}``
        :param qa_pair_template: template with two ``{}``: the question, then the answer
        :param output_pattern: regex with two groups, question and answer
        :param try_num: attempts until an answer parses
        :param model_params: API client options (``base_url``, ``api_key``, ``timeout``,
            ``max_retries``, ``concurrency``)
        :param sampling_params: generation settings sent with each request
        """
        super().__init__(**kwargs)
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.reference_template = reference_template or self.DEFAULT_REFERENCE_TEMPLATE
        self.qa_pair_template = qa_pair_template or self.DEFAULT_QA_PAIR_TEMPLATE
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.init_llm(model=api_model, kind="api", api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num)

    def build_input(self, sample: dict) -> str:
        return self.input_template.format(
            reference=self.reference_template.format(sample[self.text_key]),
            qa_pair=self.qa_pair_template.format(sample[self.query_key], sample[self.response_key]))

    def parse_output(self, raw: str):
        m = re.match(self.output_pattern, raw)
        return (m.group(1).strip(), m.group(2).strip()) if m else (None, None)

    def _parse(self, raw: str):
        q, a = self.parse_output(raw)
        return (q, a) if (q or a) else None

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        keys = list(samples)
        n = len(samples[keys[0]]) if keys else 0
        rows = [{k: samples[k][i] for k in keys} for i in range(n)]
        results = self.llm_parse([chat_messages(self.build_input(r), self.system_prompt) for r in rows], self._parse)
        for i, (q, a) in enumerate(results):
            if q:
                samples[self.query_key][i] = q
            if a:
                samples[self.response_key][i] = a
        return samples
