import re
from typing import Optional

from data_juicer.ops.common.dialog_llm import batch_len
from data_juicer.ops.common.extract_llm import COMMON_DOCS, MetaLLMMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys


@OPERATORS.register_module("extract_entity_attribute_mapper")
class ExtractEntityAttributeMapper(MetaLLMMapper):
    """Asks an LLM to summarise given attributes of given entities from the text, with short
    excerpts of the text that show each attribute.

    One request per (entity, attribute) of ``query_entities`` x ``query_attributes`` (all requests
    of a batch go out together). The answer's ``## <attribute>：`` section is the description and
    its ``### 代表性示例摘录N：`` code blocks the excerpts. ``meta`` gets four parallel lists:
    ``entity_key`` (entities), ``attribute_key`` (attributes), ``attribute_desc_key``
    (descriptions) and ``support_text_key`` (lists of excerpts); samples that already have all
    four are skipped. An answer is accepted when it has a description and, with
    ``require_support_demos``, at least one excerpt; one that is not after ``try_num`` requests
    sends the sample to the error ledger with the raw answer (Data-Juicer stores empty values).
    """

    DEFAULT_SYSTEM_PROMPT_TEMPLATE = (
        "阅读给定文本，概括{entity}的{attribute}，并从原文中摘录最能体现这一{attribute}的典型片段。\n"
        "要求：\n"
        "- 摘录的片段要简短，保持原文\n"
        "- 按照以下格式回复：\n"
        "# {entity}\n"
        "## {attribute}：\n"
        "...\n"
        "### 代表性示例摘录1：\n"
        "```\n"
        "...\n"
        "```\n"
        "### 代表性示例摘录2：\n"
        "```\n"
        "...\n"
        "```\n"
        "...\n"
    )
    DEFAULT_INPUT_TEMPLATE = "# 文本\n```\n{text}\n```\n"
    DEFAULT_ATTR_PATTERN_TEMPLATE = r"\#\#\s*{attribute}：\s*(.*?)(?=\#\#\#|\Z)"
    DEFAULT_DEMON_PATTERN = r"\#\#\#\s*代表性示例摘录(\d+)：\s*```\s*(.*?)```\s*(?=\#\#\#|\Z)"

    def __init__(self, api_model: str = "gpt-4o", query_entities: list[str] = [],  # noqa: B006
                 query_attributes: list[str] = [], *, entity_key: str = MetaKeys.main_entities,  # noqa: B006
                 attribute_key: str = MetaKeys.attributes, attribute_desc_key: str = MetaKeys.attribute_descriptions,
                 support_text_key: str = MetaKeys.attribute_support_texts, api_endpoint: Optional[str] = None,
                 response_path: Optional[str] = None, system_prompt_template: Optional[str] = None,
                 input_template: Optional[str] = None, attr_pattern_template: Optional[str] = None,
                 demo_pattern: Optional[str] = None, try_num: int = 3, require_support_demos: bool = True,
                 drop_text: bool = False, model_params: dict = {}, sampling_params: dict = {},  # noqa: B006
                 **kwargs):
        super().__init__(**kwargs)
        self.query_entities, self.query_attributes = list(query_entities), list(query_attributes)
        self.entity_key, self.attribute_key = entity_key, attribute_key
        self.attribute_desc_key, self.support_text_key = attribute_desc_key, support_text_key
        self.system_prompt_template = system_prompt_template or self.DEFAULT_SYSTEM_PROMPT_TEMPLATE
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.attr_pattern_template = attr_pattern_template or self.DEFAULT_ATTR_PATTERN_TEMPLATE
        self.demo_pattern = demo_pattern or self.DEFAULT_DEMON_PATTERN
        self.require_support_demos = bool(require_support_demos)
        self.init_common(api_model, api_endpoint, response_path, try_num, drop_text, model_params, sampling_params)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param query_entities: the entities to describe
        :param query_attributes: the attributes to describe for each entity
        :param entity_key: meta key of the entity list
        :param attribute_key: meta key of the attribute list
        :param attribute_desc_key: meta key of the description list
        :param support_text_key: meta key of the excerpt lists
        :param system_prompt_template: the system prompt (``{entity}``, ``{attribute}``)
        :param input_template: the user message (``{text}``)
        :param attr_pattern_template: regex (``{attribute}``) whose group 1 is the description
        :param demo_pattern: regex of an excerpt (number, excerpt)
        :param require_support_demos: accept an answer only when it also has an excerpt""" + COMMON_DOCS

    def parse_for(self, attribute: str):
        def parse(text):
            text = text or ""
            m = re.findall(self.attr_pattern_template.format(attribute=attribute), text, re.VERBOSE | re.DOTALL)
            desc = m[0].strip() if m else ""
            demos = [d.strip() for _, d in re.findall(self.demo_pattern, text, re.VERBOSE | re.DOTALL) if d.strip()]
            ok = bool(desc) and (bool(demos) or not self.require_support_demos)
            return (desc, demos) if ok else None
        return parse

    def process_batched(self, samples):
        n = batch_len(samples)
        metas = [dict(m) if isinstance(m, dict) else {} for m in (samples.get(Fields.meta) or [None] * n)]
        keys = (self.entity_key, self.attribute_key, self.attribute_desc_key, self.support_text_key)
        todo = [i for i in range(n) if not all(k in metas[i] for k in keys)]
        pairs = [(e, a) for e in self.query_entities for a in self.query_attributes]
        results = {i: [] for i in todo}
        for e, a in pairs:  # one round per (entity, attribute): every sample of the batch at once
            system = self.system_prompt_template.format(entity=e, attribute=a)
            msgs = [[{"role": "system", "content": system},
                     {"role": "user", "content": self.input_template.format(text=samples[self.text_key][i])}]
                    for i in todo]
            for i, res in zip(todo, self.llm_parse(msgs, self.parse_for(a)) if msgs else []):
                results[i].append(res)
        for i in todo:
            metas[i][self.entity_key] = [e for e, _ in pairs]
            metas[i][self.attribute_key] = [a for _, a in pairs]
            metas[i][self.attribute_desc_key] = [d for d, _ in results[i]]
            metas[i][self.support_text_key] = [s for _, s in results[i]]
        samples[Fields.meta] = metas
        if self.drop_text:
            samples.pop(self.text_key, None)
        return samples
