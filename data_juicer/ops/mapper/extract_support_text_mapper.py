from typing import Optional

from data_juicer.ops.common.extract_llm import COMMON_DOCS, MetaLLMMapper, warn_once
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("extract_support_text_mapper")
class ExtractSupportTextMapper(MetaLLMMapper):
    """Asks an LLM for the passage of the original text that a summary (``meta[summary_key]``,
    e.g. an event description from ``extract_event_mapper``) was made from.

    The stripped answer goes to ``meta[support_text_key]``; samples that already have it are
    skipped, and samples without a string summary are left as they are (with a warning). An empty
    answer after ``try_num`` requests sends the sample to the error ledger (Data-Juicer falls back
    to the summary itself).
    """

    DEFAULT_SYSTEM_PROMPT = (
        "你是一个原文摘录助手。你会拿到一篇文章（“原文”）和对其中某一部分的简短概括（“总结”），"
        "任务是从原文中找出并原样摘录与这段总结对应的片段。\n"
        "要求：\n"
        "- 摘录要尽量准确地覆盖总结所说的内容，不要改写\n"
        "- 有多个候选片段时，选与总结意思最贴近的那一个\n"
        "- 示例：\n"
        "### 原文：\n"
        "小镇的图书馆建于上世纪五十年代，最初只有两间屋子。八十年代扩建后，二楼新设了儿童阅览室。"
        "去年冬天暖气管道破裂，一批旧报纸被水浸泡，馆员们花了整整一个月逐页晾干、修补。"
        "如今这些报纸已经完成数字化，读者可以在线查阅。\n\n"
        "### 总结：\n"
        "讲述了馆员抢救受损旧报纸的经过。\n\n"
        "### 原文摘录：\n"
        "去年冬天暖气管道破裂，一批旧报纸被水浸泡，馆员们花了整整一个月逐页晾干、修补。"
    )
    DEFAULT_INPUT_TEMPLATE = "### 原文：\n{text}\n\n### 总结：\n{summary}\n\n### 原文摘录：\n"

    def __init__(self, api_model: str = "gpt-4o", *, summary_key: str = MetaKeys.event_description,
                 support_text_key: str = MetaKeys.support_text, api_endpoint: Optional[str] = None,
                 response_path: Optional[str] = None, system_prompt: Optional[str] = None,
                 input_template: Optional[str] = None, try_num: int = 3, drop_text: bool = False,
                 model_params: dict = {}, sampling_params: dict = {}, **kwargs):  # noqa: B006
        super().__init__(**kwargs)
        self.summary_key = summary_key
        self.support_text_key = support_text_key
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.init_common(api_model, api_endpoint, response_path, try_num, drop_text, model_params, sampling_params)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param summary_key: meta key of the summary to find the source of
        :param support_text_key: meta key receiving the supporting passage
        :param system_prompt: the system prompt
        :param input_template: the user message (``{text}``, ``{summary}``)""" + COMMON_DOCS

    def done_keys(self):
        return (self.support_text_key,)

    def messages(self, row, meta):
        summary = meta.get(self.summary_key)
        if not isinstance(summary, str):
            warn_once(self, f"meta '{self.summary_key}' is missing or not a string in some samples; they are left as "
                            "they are")
            return None
        return [{"role": "system", "content": self.system_prompt},
                {"role": "user", "content": self.input_template.format(text=row[self.text_key], summary=summary)}]

    def parse(self, text):
        return (text or "").strip() or None

    def write(self, meta, value):
        meta[self.support_text_key] = value
