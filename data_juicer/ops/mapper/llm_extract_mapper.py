from typing import Dict, List, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.models.llm.semantic import (EXTRACT_SYSTEM, InferenceStrategy, add_usage, extract_prompt,
                                             parse_extraction, strategy_of)
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys


@OPERATORS.register_module("llm_extract_mapper")
class LLMExtractMapper(LLMOpMixin, Mapper):
    """Asks an LLM to extract the fields of ``output_schema`` (output key -> what to extract) from
    each sample's ``input_keys`` (shown as ``key: value`` lines) and writes them to the meta:
    all under ``meta_output_key`` (a dict), or each key on its own when that is None.

    The answer's first JSON object gives the values (missing keys are None); for a one-key schema a
    JSON array is that key's value. Grounding knowledge (``knowledge_grounding_key`` per sample, or
    ``knowledge_grounding_fixed``) and examples (few-shot strategies) go into the prompt.
    ``llm_semantic_usage`` in the meta adds up the tokens the server reported. A sample without
    input text gets all None without a call. An answer with no JSON in ``try_num`` attempts sends
    the sample to the error ledger with the raw answer (Data-Juicer writes all None).
    """

    _accelerator = "cuda"

    def __init__(
        self,
        input_keys: List[str] = None,
        output_schema: Dict[str, str] = None,
        api_or_hf_model: str = "gpt-4o",
        *,
        meta_output_key: Optional[str] = MetaKeys.llm_extract,
        knowledge_grounding_key: Optional[str] = None,
        knowledge_grounding_fixed: Optional[str] = None,
        is_hf_model: bool = False,
        enable_vllm: bool = False,
        api_endpoint: Optional[str] = None,
        response_path: Optional[str] = None,
        system_prompt: Optional[str] = None,
        strategy: Optional[InferenceStrategy] = None,
        examples: Optional[str] = None,
        try_num: PositiveInt = 3,
        model_params: Optional[Dict] = None,
        sampling_params: Optional[Dict] = None,
        **kwargs,
    ):
        """
        :param input_keys: (required) sample fields the input text is built from (e.g. ``["query", "response"]``)
        :param output_schema: (required) ``{output key: extraction instruction}``
        :param api_or_hf_model: API model name, or a Hugging Face model (``is_hf_model`` / ``enable_vllm``)
        :param meta_output_key: meta key of the whole result; None writes each output key to the meta
        :param knowledge_grounding_key: field with background knowledge for each sample
        :param knowledge_grounding_fixed: background knowledge for every sample (wins over the key)
        :param is_hf_model: generate with ``transformers`` in this process
        :param enable_vllm: generate with an in-process vLLM engine
        :param api_endpoint: path under the base URL or full URL of the chat endpoint
        :param response_path: dotted path of the text in the API answer
        :param system_prompt: system prompt (default: extract precisely, reply with JSON only)
        :param strategy: ``direct``, ``cot``, ``few_shot`` or ``cot_shot``
        :param examples: worked examples (few-shot strategies)
        :param try_num: attempts until an answer parses
        :param model_params: API client options or HF / vLLM model arguments
        :param sampling_params: generation settings sent with each request
        """
        super().__init__(**kwargs)
        if not input_keys:
            raise ValueError(f"{self.name}: input_keys is required (the sample fields to read, e.g. ['text'])")
        if not output_schema:
            raise ValueError(f"{self.name}: output_schema is empty; give {{output_key: instruction}}")
        self.input_keys = list(input_keys)
        self.output_schema = dict(output_schema)
        self.meta_output_key = meta_output_key
        self.knowledge_grounding_key = knowledge_grounding_key
        self.knowledge_grounding_fixed = knowledge_grounding_fixed
        self.system_prompt = system_prompt or EXTRACT_SYSTEM
        self.strategy = strategy_of(strategy) if strategy else None
        self.examples = examples
        self.init_llm(model=api_or_hf_model, enable_vllm=enable_vllm, is_hf_model=is_hf_model,
                      api_endpoint=api_endpoint, response_path=response_path, model_params=model_params,
                      sampling_params=sampling_params, try_num=try_num)
        if self.llm_kind == "api":
            self.accelerator = "cpu"

    def _input_text(self, row: dict) -> str:
        return "\n".join(f"{k}: {row[k]}" for k in self.input_keys if row.get(k) is not None)

    def _grounding(self, row: dict) -> Optional[str]:
        if self.knowledge_grounding_fixed:
            return self.knowledge_grounding_fixed
        key = self.knowledge_grounding_key
        return str(row[key]) if key and row.get(key) is not None else None

    def _parse(self, raw: str):
        out = parse_extraction(raw, list(self.output_schema))
        return None if out is None else (out, getattr(raw, "usage", None))

    def _write(self, meta: dict, values: dict) -> None:
        if self.meta_output_key:
            meta[self.meta_output_key] = values
        else:
            meta.update(values)

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        keys = list(samples)
        n = len(samples[keys[0]]) if keys else 0
        metas = [dict(m) if m else {} for m in (samples.get(Fields.meta) or [None] * n)]
        todo, msgs = [], []
        for i in range(n):
            row = {k: samples[k][i] for k in keys}
            text = self._input_text(row)
            if not text:
                self._write(metas[i], {k: None for k in self.output_schema})
                continue
            todo.append(i)
            msgs.append(chat_messages(extract_prompt(text, self.output_schema, self._grounding(row), self.strategy,
                                                     self.examples), self.system_prompt))
        if todo:
            for i, (values, usage) in zip(todo, self.llm_parse(msgs, self._parse)):
                self._write(metas[i], values)
                metas[i][MetaKeys.llm_semantic_usage] = add_usage(metas[i].get(MetaKeys.llm_semantic_usage), usage)
        samples[Fields.meta] = metas
        return samples
