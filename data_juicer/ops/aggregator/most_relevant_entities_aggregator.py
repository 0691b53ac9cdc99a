import re
from typing import Optional

from data_juicer.models.llm.op_params import LLMOpMixin
from data_juicer.ops.aggregator.nested_aggregator import AGG_DOCS
from data_juicer.ops.base import Aggregator
from data_juicer.ops.common.aggregate_llm import ask, group_docs, token_counts
from data_juicer.ops.common.extract_llm import split_text_by_punctuation
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import BatchMetaKeys, Fields, MetaKeys


@OPERATORS.register_module("most_relevant_entities_aggregator")
class MostRelevantEntitiesAggregator(LLMOpMixin, Aggregator):
    """Asks an LLM for the entities of type ``query_entity_type`` most related to ``entity`` in the
    texts of a grouped sample, most important first (entities of the same kind as ``entity``
    itself are excluded).

    The texts (``meta[input_key]`` of each member, in order, as many as fit in ``max_token_num``
    tokens) go into one request; the list after the answer's ``## 列表`` heading, split on
    punctuation, goes to ``__dj__batch_meta__[output_key]``. A group that already has it is
    skipped. An answer without a list after ``try_num`` requests sends the group to the error
    ledger with the raw answer (Data-Juicer stores an empty list).
    """

    DEFAULT_SYSTEM_TEMPLATE = (
        "下面是与`{entity}`有关的一些文档，请找出与`{entity}`关系最密切的若干`{entity_type}`。\n"
        "要求：\n"
        "- 不要包含与{entity}属于同一{entity_type}的{entity_type}。\n"
        "- 按重要性从高到低排列，**越重要的越靠前**。\n"
        "- 按以下格式回复：\n"
        "## 分析\n"
        "逐一分析各个{entity_type}与{entity}的关联程度\n"
        "## 列表\n"
        "人物1, 人物2, 人物3, ..."
    )
    DEFAULT_INPUT_TEMPLATE = "`{entity}`的相关文档：\n{sub_docs}\n\n与`{entity}`最相关的一些`{entity_type}`：\n"
    DEFAULT_OUTPUT_PATTERN = r"\#\#\s*列表\s*(.*?)\Z"

    def __init__(self, api_model: str = "gpt-4o", entity: str = None, query_entity_type: str = None,
                 input_key: str = MetaKeys.event_description, output_key: str = BatchMetaKeys.most_relevant_entities,
                 max_token_num: Optional[int] = None, *, api_endpoint: Optional[str] = None,
                 response_path: Optional[str] = None, system_prompt_template: Optional[str] = None,
                 input_template: Optional[str] = None, output_pattern: Optional[str] = None, try_num: int = 3,
                 model_params: dict = {}, sampling_params: dict = {}, **kwargs):  # noqa: B006
        super().__init__(**kwargs)
        if entity is None or query_entity_type is None:
            raise ValueError("most_relevant_entities_aggregator: set both `entity` and `query_entity_type` (e.g. "
                             "entity: 孙悟空, query_entity_type: 人物)")
        self.entity, self.query_entity_type = entity, query_entity_type
        self.input_key, self.output_key, self.max_token_num = input_key, output_key, max_token_num
        self.system_prompt = (system_prompt_template or self.DEFAULT_SYSTEM_TEMPLATE).format(
            entity=entity, entity_type=query_entity_type)
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.init_llm(model=api_model, api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param entity: the entity to find related entities of
        :param query_entity_type: the type of the entities to find (e.g. 人物)
        :param input_key: meta key of the group's texts
        :param output_key: batch-meta key receiving the ranked list
        :param max_token_num: most tokens of texts in the request (None: all)
        :param system_prompt_template: the system prompt (``{entity}``, ``{entity_type}``)
        :param input_template: the user message (``{entity}``, ``{entity_type}``, ``{sub_docs}``)
        :param output_pattern: regex whose group 1 is the list""" + AGG_DOCS

    def parse(self, text):
        m = re.findall(self.output_pattern, text or "", re.VERBOSE | re.DOTALL)
        return (split_text_by_punctuation(m[0].strip()) or None) if m else None

    def process_single(self, sample):
        batch_meta = dict(sample.get(Fields.batch_meta) or {})
        if self.output_key in batch_meta:
            return sample
        docs = group_docs(sample, self.input_key, self.name)
        if docs is None:
            return sample
        result = []
        if docs:
            if self.max_token_num is not None:
                kept, total = [], 0
                for d, c in zip(docs, token_counts(self.llm_model, docs)):
                    total += c
                    if total > self.max_token_num:
                        break
                    kept.append(d)
                docs = kept
            result = ask(self, self.system_prompt, self.input_template.format(
                entity=self.entity, entity_type=self.query_entity_type, sub_docs="\n\n".join(docs)),
                self.parse)
        batch_meta[self.output_key] = result
        sample[Fields.batch_meta] = batch_meta
        return sample
