import re
from typing import Optional

from data_juicer.ops.common.extract_llm import COMMON_DOCS, MetaLLMMapper, unique
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("extract_nickname_mapper")
class ExtractNicknameMapper(MetaLLMMapper):
    """Asks an LLM which character calls which other character by which nickname in the text.

    Each answer record (``output_pattern``) gives the speaker, the person addressed and the
    nickname; records whose double-check names disagree, or whose nickname is just the
    addressee's name, are dropped. ``meta[nickname_key]`` gets a list of
    ``{relation_source_entity, relation_target_entity, relation_description: nickname,
    relation_keywords: ["nickname"], relation_strength: None}`` (repeats removed, first first;
    Data-Juicer's order is random). An answer without a record after ``try_num`` requests sends
    the sample to the error ledger with the raw answer.
    """

    DEFAULT_SYSTEM_PROMPT = (
        "请从给定文本中找出人物之间的昵称：谁用什么昵称称呼了谁。\n"
        "要求：\n"
        "- 说话人是喊出昵称的人，被称呼人是被这样叫的人，不要弄反。\n"
        "- 同一对说话人和被称呼人只给出最常用的一个昵称。\n"
        "- 直接称呼本名的不算昵称，不要输出。\n"
        "- 按如下格式输出：\n"
        "```\n"
        "### 称呼方式1\n"
        "- **说话人**：...\n"
        "- **被称呼人**：...\n"
        "- **...对...的昵称**：...\n"
        "### 称呼方式2\n"
        "- **说话人**：...\n"
        "- **被称呼人**：...\n"
        "- **...对...的昵称**：...\n"
        "...\n"
        "```\n"
    )
    DEFAULT_INPUT_TEMPLATE = "# 文本\n```\n{text}\n```\n"
    DEFAULT_OUTPUT_PATTERN = r"""
        \#\#\#\s*称呼方式(\d+)\s*
        -\s*\*\*说话人\*\*\s*：\s*(.*?)\s*
        -\s*\*\*被称呼人\*\*\s*：\s*(.*?)\s*
        -\s*\*\*(.*?)对(.*?)的昵称\*\*\s*：\s*(.*?)(?=\#\#\#|\Z) # for double check
    """

    def __init__(self, api_model: str = "gpt-4o", *, nickname_key: str = MetaKeys.nickname,
                 api_endpoint: Optional[str] = None, response_path: Optional[str] = None,
                 system_prompt: Optional[str] = None, input_template: Optional[str] = None,
                 output_pattern: Optional[str] = None, try_num: int = 3, drop_text: bool = False,
                 model_params: dict = {}, sampling_params: dict = {}, **kwargs):  # noqa: B006
        super().__init__(**kwargs)
        self.nickname_key = nickname_key
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.init_common(api_model, api_endpoint, response_path, try_num, drop_text, model_params, sampling_params)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param nickname_key: meta key receiving the nickname relations
        :param system_prompt: the system prompt (with the answer format)
        :param input_template: the user message (``{text}``)
        :param output_pattern: regex of one record (number, speaker, addressee, the two
            double-check names, nickname)""" + COMMON_DOCS

    def done_keys(self):
        return (self.nickname_key,)

    def messages(self, row, meta):
        return [{"role": "system", "content": self.system_prompt},
                {"role": "user", "content": self.input_template.format(text=row[self.text_key])}]

    def parse(self, text):
        found = []
        for _, who, whom, who2, whom2, nick in re.findall(self.output_pattern, text or "", re.VERBOSE | re.DOTALL):
            who, whom, nick = who.strip(), whom.strip(), nick.strip()
            if who != who2.strip() or whom != whom2.strip() or whom == nick:
                continue
            if who and whom and nick:
                found.append((who, whom, nick))
        return [{MetaKeys.source_entity: a, MetaKeys.target_entity: b, MetaKeys.relation_description: c,
                 MetaKeys.relation_keywords: ["nickname"], MetaKeys.relation_strength: None}
                for a, b, c in unique(found)] or None

    def write(self, meta, value):
        meta[self.nickname_key] = value
