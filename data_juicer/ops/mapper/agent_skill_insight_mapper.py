import re
from typing import Optional

from data_juicer.models.llm.op_params import LLMOpMixin
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.dialog_llm import batch_len, normalize_lang
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys

SYSTEM_PROMPTS = {
    "en": ("You get the Tools and Skills an agent used. Condense them into 3-5 capability phrases, "
           "separated by commas, in English.\n"
           "Each phrase has about 4-8 words and names a concrete object, tool or domain together with "
           "a specific action or scenario; stay grounded in the input but be more telling than the "
           "raw names, and do not copy long tool names.\n"
           "Do not use vague stand-alone labels such as \"processing\", \"operations\", "
           "\"read/write\", \"handling\", or \"files/data/content\" without a target.\n"
           "Good: bulk edits of spreadsheet fields, tracing logs by keyword, PDF tables to "
           "structured records. Bad: file I/O, data processing.\n"
           "Output only the comma-separated phrases: no numbering, no explanation, no line breaks."),
    "zh": ("输入是智能体用到的 Tools 与 Skills 列表。请归纳出 3～5 条能力短语，用逗号分隔，使用简体中文。\n"
           "每条约 8～12 个汉字，写清「对象或载体 + 具体动作或场景」，以输入为依据但比原名更有区分度，"
           "不要照抄冗长的工具名。\n"
           "不要使用空泛标签：不能只靠「处理、操作、读写、执行、调用、获取」之类的泛化动词，"
           "也不能只写「文件/数据/内容」而没有具体对象或动作。\n"
           "好例：表格字段批量改写、按关键字追溯日志、PDF 表格转结构化记录。反例：文件读写、数据处理。\n"
           "只输出逗号分隔的短语：不要编号、不要解释、不要换行。"),
}


def split_phrases(text: str) -> Optional[list]:
    """The phrases of an answer split on , ， 、 ; ； (de-duplicated, in order); None when none."""
    if not isinstance(text, str):
        return None
    labels = [s.strip() for s in re.split(r"[,，、;；]+", text.strip()) if s.strip()]
    return list(dict.fromkeys(labels)) or None


@OPERATORS.register_module("agent_skill_insight_mapper")
class AgentSkillInsightMapper(LLMOpMixin, Mapper):
    """Condenses an agent sample's tool and skill tags into 3-5 concrete capability phrases with
    an LLM.

    Reads ``meta[tool_types_key]`` and ``meta[skill_types_key]`` (from
    ``agent_dialog_normalize_mapper``; the first 30 of each go into the prompt as ``Tools: ...`` /
    ``Skills: ...``), splits the comma-separated answer on ``, ， 、 ; ；`` and stores the
    de-duplicated phrases in ``meta[insights_key]``. A sample without tools and skills gets ``[]``
    without a request; one that already has the key, or has no meta dict, is left alone. An answer
    with no phrase after ``try_num`` requests sends the sample to the error ledger (Data-Juicer
    stores ``[]``).
    """

    def __init__(self, api_model: str = "gpt-4o", *, tool_types_key: str = MetaKeys.agent_tool_types,
                 skill_types_key: str = MetaKeys.agent_skill_types, insights_key: str = MetaKeys.agent_skill_insights,
                 api_endpoint: Optional[str] = None, response_path: Optional[str] = None,
                 system_prompt: Optional[str] = None, try_num: int = 2, model_params: dict = {},  # noqa: B006
                 sampling_params: dict = {}, preferred_output_lang: str = "en", **kwargs):  # noqa: B006
        """
        :param api_model: model name at the API endpoint
        :param tool_types_key: meta key of the tools the sample used
        :param skill_types_key: meta key of the skills the sample used
        :param insights_key: meta key receiving the capability phrases
        :param api_endpoint: the endpoint URL (or a path under ``$OPENAI_BASE_URL``)
        :param response_path: dotted path of the text in the JSON answer (default
            ``choices.0.message.content``)
        :param system_prompt: the system prompt (default: a built-in one in ``preferred_output_lang``)
        :param try_num: requests per sample until the answer has a phrase; then the sample goes to
            the error ledger with the raw answer
        :param model_params: client options (``base_url``, ``api_key``, ``timeout``, ``concurrency``, ...)
        :param sampling_params: generation settings (``temperature``, ``max_tokens``, ...)
        :param preferred_output_lang: language of the phrases (``en`` or ``zh``)
        """
        super().__init__(**kwargs)
        self.tool_types_key, self.skill_types_key, self.insights_key = tool_types_key, skill_types_key, insights_key
        self.preferred_output_lang = normalize_lang(preferred_output_lang)
        self.system_prompt = system_prompt or SYSTEM_PROMPTS[self.preferred_output_lang]
        self.init_llm(model=api_model, api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num)

    @staticmethod
    def _names(value) -> list:
        items = value if isinstance(value, list) else ([value] if value else [])
        return [s for s in (str(x).strip() for x in items) if s]

    def process_batched(self, samples):
        n = batch_len(samples)
        metas = list(samples.get(Fields.meta) or [None] * n)
        todo, msgs = [], []
        for i, meta in enumerate(metas):
            if not isinstance(meta, dict) or self.insights_key in meta:
                continue
            meta = metas[i] = dict(meta)
            tools, skills = self._names(meta.get(self.tool_types_key)), self._names(meta.get(self.skill_types_key))
            if not tools and not skills:
                meta[self.insights_key] = []
                continue
            todo.append(i)
            user = f"Tools: {', '.join(tools[:30])}\nSkills: {', '.join(skills[:30])}"
            msgs.append([{"role": "system", "content": self.system_prompt}, {"role": "user", "content": user}])
        if msgs:
            for i, phrases in zip(todo, self.llm_parse(msgs, split_phrases)):
                metas[i][self.insights_key] = phrases
        if Fields.meta in samples or todo:
            samples[Fields.meta] = metas
        return samples
