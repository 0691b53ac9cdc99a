import re
from typing import ClassVar, Dict, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("optimize_qa_mapper")
class OptimizeQAMapper(LLMOpMixin, Mapper):
    """Asks an LLM to rewrite each query/response pair (``query_key`` / ``response_key``) to be more
    detailed and accurate, and writes the rewritten question and answer back.

    The pair is formatted with ``qa_pair_template`` into ``input_template``; the answer is
    matched with ``output_pattern`` (first group the question, second the answer, ``re.DOTALL``).
    A part that did not come back is left as it was. An answer that matches neither part in
    ``try_num`` attempts sends the sample to the error ledger with the raw answer (Data-Juicer
    keeps it unchanged). Base class of ``optimize_query_mapper`` / ``optimize_response_mapper``.
    """

    _accelerator = "cuda"
    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "请改写下面的问答对，让【问题】表述更完整清晰、【回答】内容更详实准确。"
        "只按下面的标记格式输出改写后的问答对，不要添加其他内容：\n"
        "【问题】\n改写后的问题\n【回答】\n改写后的回答"
    )
    DEFAULT_INPUT_TEMPLATE: ClassVar[str] = "原始问答对如下：\n{}"
    DEFAULT_QA_PAIR_TEMPLATE: ClassVar[str] = "【问题】\n{}\n【回答】\n{}"
    DEFAULT_OUTPUT_PATTERN: ClassVar[str] = r".*?【问题】\s*(.*?)\s*【回答】\s*(.*)"
    PATTERN_FLAGS: ClassVar[int] = re.DOTALL

    def __init__(
        self,
        api_or_hf_model: str = "Qwen/Qwen2.5-7B-Instruct",
        is_hf_model: bool = True,
        *,
        api_endpoint: Optional[str] = None,
        response_path: Optional[str] = None,
        system_prompt: Optional[str] = None,
        input_template: Optional[str] = None,
        qa_pair_template: Optional[str] = None,
        output_pattern: Optional[str] = None,
        try_num: PositiveInt = 3,
        enable_vllm: bool = False,
        model_params: Optional[Dict] = None,
        sampling_params: Optional[Dict] = None,
        **kwargs,
    ):
        """
        :param api_or_hf_model: Hugging Face model (default) or, with ``is_hf_model: false``, API model name
        :param is_hf_model: generate with ``transformers`` in this process; false: call the API
        :param api_endpoint: path under the base URL or full URL of the chat endpoint
        :param response_path: dotted path of the text in the API answer
        :param system_prompt: system prompt
        :param input_template: user prompt template with one ``{}`` for the formatted pair
        :param qa_pair_template: template with two ``{}``: the question, then the answer
        :param output_pattern: regex with two groups, question and answer
        :param try_num: attempts until an answer parses
        :param enable_vllm: generate with an in-process vLLM engine
        :param model_params: API client options (``base_url``: the model is served there) or HF / vLLM
            model arguments
        :param sampling_params: generation settings (e.g. ``temperature``, ``max_tokens``)
        """
        super().__init__(**kwargs)
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.qa_pair_template = qa_pair_template or self.DEFAULT_QA_PAIR_TEMPLATE
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.is_hf_model = is_hf_model
        self.enable_vllm = enable_vllm
        self.init_llm(model=api_or_hf_model, enable_vllm=enable_vllm, is_hf_model=is_hf_model,
                      api_endpoint=api_endpoint, response_path=response_path, model_params=model_params,
                      sampling_params=sampling_params, try_num=try_num)
        if self.llm_kind == "api":
            self.accelerator = "cpu"

    def build_input(self, sample: dict) -> str:
        return self.input_template.format(self.qa_pair_template.format(sample[self.query_key],
                                                                       sample[self.response_key]))

    def parse_output(self, raw: str):
        m = re.match(self.output_pattern, raw, self.PATTERN_FLAGS)
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
