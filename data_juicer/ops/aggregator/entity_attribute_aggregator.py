import re
from typing import Optional

from data_juicer.models.llm.op_params import LLMOpMixin
from data_juicer.ops.aggregator.nested_aggregator import AGG_DOCS, NestedAggregator
from data_juicer.ops.base import Aggregator
from data_juicer.ops.common.aggregate_llm import ask, group_docs, recursive_summary, split_under_limit, token_counts
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import BatchMetaKeys, Fields, MetaKeys


@OPERATORS.register_module("entity_attribute_aggregator")
class EntityAttributeAggregator(LLMOpMixin, Aggregator):
    """Summarises one attribute of one entity (e.g. the background of a character) from the texts
    of a grouped sample with an LLM, in at most ``word_limit`` words.

    The texts (``meta[input_key]`` of each member) are split into groups under ``max_token_num``
    tokens; each group is asked for a ``# <entity>`` / ``## <attribute>`` summary (the text after
    the heading is kept), and the group summaries are merged by ``nested_aggregator``'s recursive
    summary. The result goes to ``__dj__batch_meta__[output_key]``; a group that already has it
    is skipped. An answer without the headings after ``try_num`` requests sends the group to the
    error ledger with the raw answer.
    """

    DEFAULT_SYSTEM_TEMPLATE = (
        "下面是与`{entity}`有关的一些文档，请总结`{entity}`的`{attribute}`。\n"
        "要求：\n"
        "- 尽量沿用原文中的专有名词\n"
        "- 结合上下文，忽略前后矛盾的细枝末节\n"
        "- 只总结文档里与`{entity}`的`{attribute}`相关的内容\n"
        "- 字数控制在**{word_limit}字以内**\n"
        "- 输出格式如下：\n"
        "# {entity}\n"
        "## {attribute}\n"
        "...\n"
        "{example}"
    )
    DEFAULT_EXAMPLE_PROMPT = (
        "- 例如，根据相关文档总结`林黛玉`的`性格特点`，**100字**以内的示例如下：\n"
        "`林黛玉`的`性格特点`总结：\n"
        "# 林黛玉\n"
        "## 性格特点\n"
        "敏感多思，才情出众，常以诗寄情。自尊心强，言语尖利却心地纯真，"
        "寄人篱下的处境使她多愁善感，对知己真诚专一。\n"
    )
    DEFAULT_INPUT_TEMPLATE = "`{entity}`的相关文档：\n{sub_docs}\n\n`{entity}`的`{attribute}`总结：\n"
    DEFAULT_OUTPUT_PATTERN_TEMPLATE = r"\#\s*{entity}\s*\#\#\s*{attribute}\s*(.*?)\Z"

    def __init__(self, api_model: str = "gpt-4o", entity: str = None, attribute: str = None,
                 input_key: str = MetaKeys.event_description, output_key: str = BatchMetaKeys.entity_attribute,
                 word_limit: int = 100, max_token_num: Optional[int] = None, *, api_endpoint: Optional[str] = None,
                 response_path: Optional[str] = None, system_prompt_template: Optional[str] = None,
                 example_prompt: Optional[str] = None, input_template: Optional[str] = None,
                 output_pattern_template: Optional[str] = None, try_num: int = 3, model_params: dict = {},  # noqa: B006
                 sampling_params: dict = {}, **kwargs):  # noqa: B006
        super().__init__(**kwargs)
        if entity is None or attribute is None:
            raise ValueError("entity_attribute_aggregator: set both `entity` and `attribute` (e.g. entity: 孙悟空, "
                             "attribute: 出身背景)")
        self.entity, self.attribute = entity, attribute
        self.input_key, self.output_key = input_key, output_key
        self.word_limit, self.max_token_num = word_limit, max_token_num
        self.example_prompt = example_prompt or self.DEFAULT_EXAMPLE_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.system_prompt = (system_prompt_template or self.DEFAULT_SYSTEM_TEMPLATE).format(
            entity=entity, attribute=attribute, word_limit=word_limit, example=self.example_prompt)
        self.output_pattern = (output_pattern_template or self.DEFAULT_OUTPUT_PATTERN_TEMPLATE).format(
            entity=entity, attribute=attribute)
        self.init_llm(model=api_model, api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num)
        self.nested_sum = NestedAggregator(api_model=api_model, max_token_num=max_token_num,
                                           api_endpoint=api_endpoint, response_path=response_path, try_num=try_num,
                                           model_params=model_params, sampling_params=sampling_params)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param entity: the entity whose attribute is summarised
        :param attribute: the attribute to summarise
        :param input_key: meta key of the group's texts
        :param output_key: batch-meta key receiving the summary
        :param word_limit: most words (characters for Chinese) of the summary
        :param max_token_num: most tokens of texts per request (None: all at once)
        :param system_prompt_template: the system prompt (``{entity}``, ``{attribute}``,
            ``{word_limit}``, ``{example}``)
        :param example_prompt: the worked example put in the system prompt
        :param input_template: the user message (``{entity}``, ``{attribute}``, ``{sub_docs}``)
        :param output_pattern_template: regex (``{entity}``, ``{attribute}``) whose group 1 is the
            summary""" + AGG_DOCS

    def parse(self, text):
        m = re.findall(self.output_pattern, text or "", re.VERBOSE | re.DOTALL)
        return (m[0].strip() or None) if m else None

    def process_single(self, sample):
        batch_meta = dict(sample.get(Fields.batch_meta) or {})
        if self.output_key in batch_meta:
            return sample
        docs = group_docs(sample, self.input_key, self.name)
        if docs is None:
            return sample
        summary = ""
        if docs:
            counts = token_counts(self.llm_model, docs) if self.max_token_num is not None else [0] * len(docs)
            results = [ask(self, self.system_prompt, self.input_template.format(
                entity=self.entity, attribute=self.attribute, sub_docs="\n\n".join(g)), self.parse)
                for g in split_under_limit(docs, counts, self.max_token_num)]
            summary = recursive_summary(self.nested_sum, results)
        batch_meta[self.output_key] = summary
        sample[Fields.batch_meta] = batch_meta
        return sample
