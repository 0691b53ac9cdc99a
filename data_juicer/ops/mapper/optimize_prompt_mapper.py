import logging
import random
import re
from typing import ClassVar, Dict, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

logger = logging.getLogger(__name__)


@OPERATORS.register_module("optimize_prompt_mapper")
class OptimizePromptMapper(LLMOpMixin, Mapper):
    """Writes ``gen_num`` new, improved prompts per batch from the batch's prompts (``prompt_key``).

    Up to ``max_example_num`` prompts of the batch, drawn at random, are shown as examples; each
    new prompt (the first ``output_pattern`` match of the answer) joins the examples for the next
    one, the oldest leaving. New prompts become new rows whose other fields copy the batch's
    first row; with ``keep_original_sample: false`` only the new rows remain. An empty answer is
    asked again up to ``retry_num`` times, then that generation is skipped with a warning (as
    Data-Juicer: a batch-level op, no sample is lost). Generations are sequential by design (each
    sees the previous one).
    """

    _accelerator = "cuda"
    fan_out = True
    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "请仔细阅读下面的几条示例提示词，归纳它们共同的写法和要点，然后写出一条更好的新提示词，让模型更好地完成同一任务。要求：\n"
        "1. 新的【提示词】不能与任何输入的【提示词】完全相同，但格式要相近。\n"
        "2. 改动应以关键词、核心参数等细节上的微调为主，不要大幅改写。\n"
        "3. 只输出以【提示词】开头的新提示词，不要输出其他任何内容。\n"
    )
    DEFAULT_INPUT_TEMPLATE: ClassVar[str] = "{}"
    DEFAULT_EXAMPLE_TEMPLATE: ClassVar[str] = "\n下面是一条示例：\n{}"
    DEFAULT_PROMPT_TEMPLATE: ClassVar[str] = "【提示词】\n{}\n"
    DEFAULT_OUTPUT_PATTERN: ClassVar[str] = r"【提示词】(.*?)(?=【|$)"

    def __init__(
        self,
        api_or_hf_model: str = "Qwen/Qwen2.5-7B-Instruct",
        gen_num: PositiveInt = 3,
        max_example_num: PositiveInt = 3,
        keep_original_sample: bool = True,
        retry_num: int = 3,
        *,
        api_endpoint: Optional[str] = None,
        response_path: Optional[str] = None,
        system_prompt: Optional[str] = None,
        input_template: Optional[str] = None,
        example_template: Optional[str] = None,
        prompt_template: Optional[str] = None,
        output_pattern: Optional[str] = None,
        enable_vllm: bool = False,
        is_hf_model: bool = False,
        model_params: Optional[Dict] = None,
        sampling_params: Optional[Dict] = None,
        **kwargs,
    ):
        """
        :param api_or_hf_model: API model name, or a Hugging Face model (``is_hf_model`` / ``enable_vllm``)
        :param gen_num: new prompts per batch
        :param max_example_num: most example prompts shown at once
        :param keep_original_sample: keep the original rows beside the new ones
        :param retry_num: attempts per new prompt while the answer holds none
        :param api_endpoint: path under the base URL or full URL of the chat endpoint
        :param response_path: dotted path of the text in the API answer
        :param system_prompt: system prompt
        :param input_template: user prompt template with one ``{}`` for the examples
        :param example_template: template of one example with one ``{}``
        :param prompt_template: template of one prompt inside an example, one ``{}``
        :param output_pattern: regex whose first group is the new prompt
        :param enable_vllm: generate with an in-process vLLM engine
        :param is_hf_model: generate with ``transformers`` in this process
        :param model_params: API client options or HF / vLLM model arguments
        :param sampling_params: generation settings sent with each request
        """
        super().__init__(**kwargs)
        self.gen_num = gen_num
        self.max_example_num = max_example_num
        self.keep_original_sample = keep_original_sample
        self.retry_num = retry_num
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.example_template = example_template or self.DEFAULT_EXAMPLE_TEMPLATE
        self.prompt_template = prompt_template or self.DEFAULT_PROMPT_TEMPLATE
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.init_llm(model=api_or_hf_model, enable_vllm=enable_vllm, is_hf_model=is_hf_model,
                      api_endpoint=api_endpoint, response_path=response_path, model_params=model_params,
                      sampling_params=sampling_params, try_num=max(1, retry_num))

    def build_input(self, examples: list) -> str:
        return self.input_template.format(
            "".join(self.example_template.format(self.prompt_template.format(p)) for p in examples))

    def parse_output(self, raw: str) -> str:
        found = re.findall(self.output_pattern, raw, re.DOTALL)
        return found[0].strip() if found else ""

    def generate_one(self, examples: list) -> str:
        msgs = chat_messages(self.build_input(examples), self.system_prompt)
        for attempt in range(max(1, self.retry_num)):
            out = self.parse_output(self.llm.chat([msgs], attempt=attempt)[0])
            if out:
                return out
        logger.warning(f"{self.name}: no prompt in {self.retry_num} answers; this generation is skipped")
        return ""

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        if self.prompt_key not in samples or not samples[self.prompt_key]:
            return samples
        prompts = samples[self.prompt_key]
        examples = random.sample(list(prompts), min(self.max_example_num, len(prompts)))
        new = []
        for _ in range(self.gen_num):
            p = self.generate_one(examples)
            if p:
                new.append(p)
                examples.append(p)
                if len(examples) > self.max_example_num:
                    examples.pop(0)
        out = {}
        for key, values in samples.items():
            extra = new if key == self.prompt_key else [values[0]] * len(new)
            out[key] = (list(values) + extra) if self.keep_original_sample else list(extra)
        return out
