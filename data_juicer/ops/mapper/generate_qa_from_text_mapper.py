import re
from typing import Dict, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("generate_qa_from_text_mapper")
class GenerateQAFromTextMapper(LLMOpMixin, Mapper):
    """Generates question/answer pairs from each text with a doc-to-QA model and emits one row per
    pair (the sample's fields, plus ``query_key`` and ``response_key``).

    The text is sent as the user message; the answer is split with ``output_pattern`` (default:
    ``Human: ... Assistant: ...`` turns); at most ``max_num`` pairs are kept. ``enable_vllm``
    runs vLLM, else ``transformers``; ``model_params.base_url`` sends the requests to an
    OpenAI-compatible server serving ``hf_model``. An answer with no pair is asked again up to 3
    times; then the sample goes to the error ledger with the raw answer (Data-Juicer drops it
    with a warning).
    """

    _accelerator = "cuda"
    fan_out = True
    DEFAULT_OUTPUT_PATTERN = r"Human:(.*?)Assistant:(.*?)(?=Human|$)"

    def __init__(
        self,
        hf_model: str = "alibaba-pai/pai-qwen1_5-7b-doc2qa",
        max_num: Optional[PositiveInt] = None,
        *,
        output_pattern: Optional[str] = None,
        enable_vllm: bool = False,
        model_params: Optional[Dict] = None,
        sampling_params: Optional[Dict] = None,
        **kwargs,
    ):
        """
        :param hf_model: Hugging Face model name or folder (or the served model name with ``base_url``)
        :param max_num: most pairs kept per text (None: all)
        :param output_pattern: regex with two groups, question and answer, found repeatedly
        :param enable_vllm: generate with an in-process vLLM engine (else ``transformers``)
        :param model_params: model arguments, or API client options with ``base_url``
        :param sampling_params: generation settings (e.g. ``temperature``, ``max_tokens``)
        """
        super().__init__(**kwargs)
        self.max_num = max_num
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.init_llm(model=hf_model, enable_vllm=enable_vllm, is_hf_model=not enable_vllm,
                      model_params=model_params, sampling_params=sampling_params, try_num=3)

    def parse_output(self, raw: str) -> list:
        return [(q.strip(), a.strip()) for q, a in re.findall(self.output_pattern, raw, re.DOTALL)]

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        keys = list(samples)
        out_keys = keys + [k for k in (self.query_key, self.response_key) if k not in keys]
        out = {k: [] for k in out_keys}
        msgs = [chat_messages(t) for t in samples[self.text_key]]
        for i, pairs in enumerate(self.llm_parse(msgs, lambda raw: self.parse_output(raw) or None)):
            for q, a in (pairs[: self.max_num] if self.max_num is not None else pairs):
                row = {k: samples[k][i] for k in keys}
                row[self.query_key], row[self.response_key] = q, a
                for k in out_keys:
                    out[k].append(row[k])
        return out
