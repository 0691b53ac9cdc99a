import copy
import re
from typing import Optional

from data_juicer.ops.common.dialog_llm import batch_len
from data_juicer.ops.common.extract_llm import COMMON_DOCS, MetaLLMMapper, split_text_by_punctuation
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys


@OPERATORS.register_module("extract_event_mapper")
class ExtractEventMapper(MetaLLMMapper):
    """Asks an LLM to split the text's plot into events, each with the characters involved, and
    returns one row per event (a 1 -> N mapper).

    Each answer record (``output_pattern``) gives an event description and its characters (split
    on punctuation; an event without characters is dropped). Every output row is a copy of its
    sample with ``meta[event_desc_key]`` = the description and ``meta[relevant_char_key]`` = the
    characters. A batch whose first sample already has both keys is returned as it is. An answer
    without an event after ``try_num`` requests sends the sample to the error ledger with the raw
    answer (Data-Juicer drops such a sample, or returns the whole batch unchanged when no sample
    of it had an event).
    """

    fan_out = True
    DEFAULT_SYSTEM_PROMPT = (
        "请把给定文本的情节按要点逐条总结，并列出每条情节涉及的人物。\n"
        "要求：\n"
        "- 覆盖全部内容，不要遗漏，也不要编造文本中没有的情节，忠于原文\n"
        "- 结合上下文交代清楚前因后果，但仍以原文事实为准\n"
        "- 不加入主观评价\n"
        "- 尽量保留文本中的专有名词\n"
        "- 列出的人物必须在该条情节中出现，只列主要人物，但不要漏掉主要人物\n"
        "- 按以下格式输出：\n"
        "### 情节1：\n"
        "- **情节描述**： ...\n"
        "- **相关人物**：人物1，人物2，人物3，...\n"
        "### 情节2：\n"
        "- **情节描述**： ...\n"
        "- **相关人物**：人物1，人物2，...\n"
        "...\n"
    )
    DEFAULT_INPUT_TEMPLATE = "# 文本\n```\n{text}\n```\n"
    DEFAULT_OUTPUT_PATTERN = r"""
        \#\#\#\s*情节(\d+)：\s*
        -\s*\*\*情节描述\*\*\s*：\s*(.*?)\s*
        -\s*\*\*相关人物\*\*\s*：\s*(.*?)(?=\#\#\#|\Z)
    """

    def __init__(self, api_model: str = "gpt-4o", *, event_desc_key: str = MetaKeys.event_description,
                 relevant_char_key: str = MetaKeys.relevant_characters, api_endpoint: Optional[str] = None,
                 response_path: Optional[str] = None, system_prompt: Optional[str] = None,
                 input_template: Optional[str] = None, output_pattern: Optional[str] = None, try_num: int = 3,
                 drop_text: bool = False, model_params: dict = {}, sampling_params: dict = {},  # noqa: B006
                 **kwargs):
        super().__init__(**kwargs)
        self.event_desc_key, self.relevant_char_key = event_desc_key, relevant_char_key
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.init_common(api_model, api_endpoint, response_path, try_num, drop_text, model_params, sampling_params)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param event_desc_key: meta key receiving an event's description
        :param relevant_char_key: meta key receiving an event's characters
        :param system_prompt: the system prompt (with the answer format)
        :param input_template: the user message (``{text}``)
        :param output_pattern: regex of one event (number, description, characters)""" + COMMON_DOCS

    def parse(self, text):
        events = []
        for _, desc, chars in re.findall(self.output_pattern, text or "", re.VERBOSE | re.DOTALL):
            names = split_text_by_punctuation(chars)
            if names:
                events.append((desc, names))
        return events or None

    def process_batched(self, samples):
        n = batch_len(samples)
        metas = samples.get(Fields.meta) or [None] * n
        if n and isinstance(metas[0], dict) and self.event_desc_key in metas[0] and self.relevant_char_key in metas[0]:
            return samples
        msgs = [[{"role": "system", "content": self.system_prompt},
                 {"role": "user", "content": self.input_template.format(text=t)}] for t in samples[self.text_key]]
        found = self.llm_parse(msgs, self.parse) if msgs else []
        if self.drop_text:
            samples.pop(self.text_key, None)
        keys = list(dict.fromkeys(list(samples) + [Fields.meta]))
        out = {k: [] for k in keys}
        for i, events in enumerate(found):
            for desc, names in events:
                for k in keys:
                    out[k].append(copy.deepcopy(samples[k][i]) if k in samples else None)
                meta = out[Fields.meta][-1] if isinstance(out[Fields.meta][-1], dict) else {}
                meta[self.event_desc_key], meta[self.relevant_char_key] = desc, names
                out[Fields.meta][-1] = meta
        return out
