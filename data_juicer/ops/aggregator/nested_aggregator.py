from typing import Optional

from data_juicer.models.llm.op_params import LLMOpMixin
from data_juicer.ops.base import Aggregator
from data_juicer.ops.common.aggregate_llm import group_docs, recursive_summary
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys

AGG_DOCS = """
        :param api_endpoint: the endpoint URL (or a path under ``$OPENAI_BASE_URL``)
        :param response_path: dotted path of the text in the JSON answer (default
            ``choices.0.message.content``)
        :param try_num: requests per call until the answer parses; then the group goes to the
            error ledger with the raw answer
        :param model_params: client options (``base_url``, ``api_key``, ``timeout``, ``concurrency``, ...)
        :param sampling_params: generation settings (``temperature``, ``max_tokens``, ...)"""


@OPERATORS.register_module("nested_aggregator")
class NestedAggregator(LLMOpMixin, Aggregator):
    """Condenses the texts of a grouped sample (``meta[input_key]`` of each member, e.g. event
    descriptions) into one summary of about their average length, recursively with an LLM.

    The texts are split into consecutive groups under ``max_token_num`` tokens (one group when
    unset; pairs when every text is alone), each group is summarised, and the summaries are
    summarised again until one is left; surrounding quotes are stripped from each answer. The
    result goes to ``__dj__batch_meta__[output_key]``; a group that already has it is skipped.
    An empty answer after ``try_num`` requests sends the group to the error ledger.
    """

    DEFAULT_SYSTEM_PROMPT = (
        "给你若干文档片段，请把它们合并成一篇连贯的总结。\n"
        "要求：\n"
        "- 总结的长度与片段的平均长度大致相当\n"
        "- 不加入主观看法\n"
        "- 尽量保留原文中的专有名词\n"
        "- 只输出总结本身，不要输出其他内容\n"
        "- 参考示例：\n"
        "文档碎片：\n阿明第一次参加马拉松，出发时跑得太快。\n\n"
        "文档碎片：\n跑到二十公里处他开始抽筋，只好走走停停。\n\n"
        "文档碎片：\n一位陌生的跑友陪他走完了最难熬的五公里。\n\n"
        "文档碎片：\n最后他在关门前十分钟冲过终点。\n\n"
        "\n文档总结：\n"
        "阿明首次跑马拉松起步过快，二十公里后抽筋，在陌生跑友的陪伴下坚持，最终赶在关门前完赛。"
    )
    DEFAULT_INPUT_TEMPLATE = "{sub_docs}\n\n文档总结：\n"
    DEFAULT_SUB_DOC_TEMPLATE = "文档碎片：\n{text}\n"

    def __init__(self, api_model: str = "gpt-4o", input_key: str = MetaKeys.event_description,
                 output_key: str = None, max_token_num: Optional[int] = None, *, api_endpoint: Optional[str] = None,
                 response_path: Optional[str] = None, system_prompt: Optional[str] = None,
                 sub_doc_template: Optional[str] = None, input_template: Optional[str] = None, try_num: int = 3,
                 model_params: dict = {}, sampling_params: dict = {}, **kwargs):  # noqa: B006
        super().__init__(**kwargs)
        self.input_key = input_key or self.text_key
        self.output_key = output_key or self.input_key
        self.max_token_num = max_token_num
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.sub_doc_template = sub_doc_template or self.DEFAULT_SUB_DOC_TEMPLATE
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.init_llm(model=api_model, api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param input_key: meta key of the texts to condense
        :param output_key: batch-meta key receiving the summary (default: ``input_key``)
        :param max_token_num: most tokens of texts per request (None: all at once)
        :param system_prompt: the system prompt
        :param sub_doc_template: how one text is written (``{text}``)
        :param input_template: the user message (``{sub_docs}``)""" + AGG_DOCS

    def process_single(self, sample):
        batch_meta = dict(sample.get(Fields.batch_meta) or {})
        if self.output_key in batch_meta:
            return sample
        docs = group_docs(sample, self.input_key, self.name)
        if docs is None:
            return sample
        batch_meta[self.output_key] = recursive_summary(self, docs)
        sample[Fields.batch_meta] = batch_meta
        return sample
