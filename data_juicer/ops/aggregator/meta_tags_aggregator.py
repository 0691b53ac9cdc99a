import re
from typing import Optional

from loguru import logger

from data_juicer.models.llm.op_params import LLMOpMixin
from data_juicer.ops.aggregator.nested_aggregator import AGG_DOCS
from data_juicer.ops.base import Aggregator
from data_juicer.ops.common.aggregate_llm import ask
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys


@OPERATORS.register_module("meta_tags_aggregator")
class MetaTagsAggregator(LLMOpMixin, Aggregator):
    """Merges near-synonymous meta tags of a grouped sample with an LLM, optionally onto a given
    set of target tags (a catch-all such as 其他 collects what fits nowhere).

    The tags in ``meta[meta_tag_key]`` of the members (a string or a list of strings each) are
    counted and sent as a ``| tag | count |`` table; the answer's ``** <tag>归类为<merged> **``
    lines (``output_pattern``) map tags to merged tags, and every member's tags are replaced in
    place (unmapped tags stay). An answer with no mapping after ``try_num`` requests sends the
    group to the error ledger with the raw answer (Data-Juicer leaves the tags unchanged).
    """

    DEFAULT_SYSTEM_PROMPT = (
        "给你一些标签和它们出现的次数，请把意思相近的标签合并。\n"
        "要求：\n"
        "- 有两种情况。第一种是事先给定了合并后的标签，需要把每个原标签归到其中之一；"
        "如果给定的标签里有“其他”这类兜底标签，归不进去的原标签都归为它。示例：\n"
        "合并后的标签应限定在[美食, 出行, 其他]中。\n"
        "| 合并前标签 | 频次 |\n"
        "| ------ | ------ |\n"
        "| 火锅 | 14 |\n"
        "| 地铁 | 9 |\n"
        "| 甜品 | 11 |\n"
        "| 天气 | 5 |\n"
        "| 打车 | 7 |\n"
        "\n"
        "## 分析：“火锅”“甜品”属于“美食”，“地铁”“打车”属于“出行”，“天气”与两者都无关，归为“其他”。\n"
        "## 标签合并：\n"
        "** 火锅归类为美食 **\n"
        "** 地铁归类为出行 **\n"
        "** 甜品归类为美食 **\n"
        "** 天气归类为其他 **\n"
        "** 打车归类为出行 **\n"
        "- 第二种是没有给定合并后的标签，需要自己归纳出合理的类别，频次低且难以归类的可归为“其他”。示例：\n"
        "| 合并前标签 | 频次 |\n"
        "| ------ | ------ |\n"
        "| 火锅 | 14 |\n"
        "| 地铁 | 9 |\n"
        "| 甜品 | 11 |\n"
        "| 天气 | 1 |\n"
        "| 打车 | 7 |\n"
        "\n"
        "## 分析：“火锅”“甜品”都与饮食有关，归为“美食”；“地铁”“打车”都是交通方式，归为“出行”；"
        "“天气”频次低且与其他标签关联不大，归为“其他”。\n"
        "## 标签合并：\n"
        "** 火锅归类为美食 **\n"
        "** 地铁归类为出行 **\n"
        "** 甜品归类为美食 **\n"
        "** 天气归类为其他 **\n"
        "** 打车归类为出行 **\n"
    )
    DEFAULT_INPUT_TEMPLATE = "{target_tag_str}| 合并前标签 | 频次 |\n| ------ | ------ |\n{tag_strs}"
    DEFAULT_TARGET_TAG_TEMPLATE = "合并后的标签应限定在[{target_tags}]中。\n"
    DEFAULT_TAG_TEMPLATE = "| {tag} | {cnt} |"
    DEFAULT_OUTPUT_PATTERN = r"\*\*\s*(\w+)归类为(\w+)\s*\*\*"

    def __init__(self, api_model: str = "gpt-4o", meta_tag_key: str = MetaKeys.dialog_sentiment_labels,
                 target_tags: Optional[list[str]] = None, *, api_endpoint: Optional[str] = None,
                 response_path: Optional[str] = None, system_prompt: Optional[str] = None,
                 input_template: Optional[str] = None, target_tag_template: Optional[str] = None,
                 tag_template: Optional[str] = None, output_pattern: Optional[str] = None, try_num: int = 3,
                 model_params: dict = {}, sampling_params: dict = {}, **kwargs):  # noqa: B006
        super().__init__(**kwargs)
        self.meta_tag_key = meta_tag_key
        self.target_tags = target_tags
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.tag_template = tag_template or self.DEFAULT_TAG_TEMPLATE
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.target_tag_str = (target_tag_template or self.DEFAULT_TARGET_TAG_TEMPLATE).format(
            target_tags=", ".join(target_tags)) if target_tags else ""
        self.init_llm(model=api_model, api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param meta_tag_key: meta key of the tags to merge
        :param target_tags: the merged tags to map onto (None: the model chooses)
        :param system_prompt: the system prompt
        :param input_template: the user message (``{target_tag_str}``, ``{tag_strs}``)
        :param target_tag_template: how the target tags are given (``{target_tags}``)
        :param tag_template: one row of the tag table (``{tag}``, ``{cnt}``)
        :param output_pattern: regex whose groups 1 and 2 are a tag and its merged tag""" + AGG_DOCS

    def parse(self, text):
        return dict(re.findall(self.output_pattern, text or "", re.VERBOSE | re.DOTALL)) or None

    def process_single(self, sample):
        metas = sample.get(Fields.meta)
        if not isinstance(metas, list):
            return sample
        counts: dict = {}
        for meta in metas:
            tags = meta.get(self.meta_tag_key) if isinstance(meta, dict) else None
            if tags is None:
                continue
            if isinstance(tags, str):
                tags = [tags]
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                logger.warning(f"{self.name}: meta '{self.meta_tag_key}' must be a string or a list of strings; the "
                               "group is left as it is")
                return sample
            for t in tags:
                counts[t] = counts.get(t, 0) + 1
        if not counts:
            return sample
        rows = "\n".join(self.tag_template.format(tag=k, cnt=v) for k, v in counts.items())
        tag_map = ask(self, self.system_prompt, self.input_template.format(target_tag_str=self.target_tag_str,
                                                                           tag_strs=rows), self.parse)
        new_metas = []
        for meta in metas:
            meta = dict(meta) if isinstance(meta, dict) else meta
            tags = meta.get(self.meta_tag_key) if isinstance(meta, dict) else None
            if isinstance(tags, str):
                meta[self.meta_tag_key] = tag_map.get(tags, tags)
            elif isinstance(tags, list):
                meta[self.meta_tag_key] = [tag_map.get(t, t) for t in tags]
            new_metas.append(meta)
        sample[Fields.meta] = new_metas
        return sample
