import re
from typing import Optional

from data_juicer.ops.common.extract_llm import COMMON_DOCS, MetaLLMMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("relation_identity_mapper")
class RelationIdentityMapper(MetaLLMMapper):
    """Asks an LLM what ``target_entity`` is to ``source_entity`` according to the text (e.g.
    her teacher, his former rival; ``另一个身份`` when both are the same person).

    The relation is the last ``所以{target}是{source}的：...`` line (``output_pattern_template``),
    or failing that the text after the colon of the last line starting with 所以/因此/故/可见. It
    goes to ``meta[output_key]``; samples that already have it are skipped. An answer without a
    relation after ``try_num`` requests sends the sample to the error ledger with the raw answer
    (Data-Juicer stores an empty string).
    """

    DEFAULT_SYSTEM_PROMPT_TEMPLATE = (
        "下面给出一段涉及{entity1}和{entity2}的文本，请判断{entity2}是{entity1}的什么人（二者的关系）。\n"
        "要求：\n"
        "- 关系用一个或几个词表示，必要时可加一个形容词修饰\n"
        "- 关系中不要带任何标点符号\n"
        "- 需要根据文本做合理推理后再下结论\n"
        "- 如果两者其实是同一个人，关系写作：另一个身份\n"
        "- 输出格式：\n"
        "分析推理：...\n"
        "所以{entity2}是{entity1}的：...\n"
        "- 注意方向：回答的是{entity2}是{entity1}的什么，而不是{entity1}是{entity2}的什么"
    )
    DEFAULT_INPUT_TEMPLATE = "关于{entity1}和{entity2}的文本信息：\n```\n{text}\n```\n"
    DEFAULT_OUTPUT_PATTERN_TEMPLATE = r"""
        \s*分析推理：\s*(.*?)\s*
        \s*所以{entity2}是{entity1}的：\s*(.*?)\Z
    """

    def __init__(self, api_model: str = "gpt-4o", source_entity: str = None, target_entity: str = None, *,
                 output_key: str = MetaKeys.role_relation, api_endpoint: Optional[str] = None,
                 response_path: Optional[str] = None, system_prompt_template: Optional[str] = None,
                 input_template: Optional[str] = None, output_pattern_template: Optional[str] = None,
                 try_num: int = 3, drop_text: bool = False, model_params: dict = {},  # noqa: B006
                 sampling_params: dict = {}, **kwargs):  # noqa: B006
        super().__init__(**kwargs)
        if source_entity is None or target_entity is None:
            raise ValueError("relation_identity_mapper: set both `source_entity` and `target_entity` (the two "
                             "people whose relation is asked, e.g. source_entity: 孙悟空, target_entity: 唐僧)")
        self.source_entity, self.target_entity = source_entity, target_entity
        self.output_key = output_key
        fmt = dict(entity1=source_entity, entity2=target_entity)
        self.system_prompt = (system_prompt_template or self.DEFAULT_SYSTEM_PROMPT_TEMPLATE).format(**fmt)
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.output_pattern = (output_pattern_template or self.DEFAULT_OUTPUT_PATTERN_TEMPLATE).format(**fmt)
        self.init_common(api_model, api_endpoint, response_path, try_num, drop_text, model_params, sampling_params)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param source_entity: the first person (``{entity1}`` in the templates)
        :param target_entity: the second person (``{entity2}``); the answer is what they are to the first
        :param output_key: meta key receiving the relation
        :param system_prompt_template: the system prompt (``{entity1}``, ``{entity2}``)
        :param input_template: the user message (``{entity1}``, ``{entity2}``, ``{text}``)
        :param output_pattern_template: regex (``{entity1}``, ``{entity2}``) whose group 2 is the
            relation""" + COMMON_DOCS

    def done_keys(self):
        return (self.output_key,)

    def messages(self, row, meta):
        return [{"role": "system", "content": self.system_prompt},
                {"role": "user", "content": self.input_template.format(entity1=self.source_entity,
                                                                        entity2=self.target_entity,
                                                                        text=row[self.text_key])}]

    def parse(self, text):
        text = text or ""
        relation = ""
        for _, rel in re.findall(self.output_pattern, text, re.VERBOSE | re.DOTALL):
            relation = rel.strip()
        if relation:
            return relation
        for line in reversed(text.strip().splitlines()):  # a looser "所以/因此 ...：<relation>" line
            m = re.search(r"(?:所以|因此|故|可见).{0,48}?[：:]\s*(.+?)(?:\s*$)", line.strip())
            if m:
                cand = m.group(1).strip().strip('。."\'“”')
                if cand:
                    return cand
        return None

    def write(self, meta, value):
        meta[self.output_key] = value
