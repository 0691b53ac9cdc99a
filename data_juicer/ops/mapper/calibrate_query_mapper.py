from typing import ClassVar

from data_juicer.ops.mapper.calibrate_qa_mapper import CalibrateQAMapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("calibrate_query_mapper")
class CalibrateQueryMapper(CalibrateQAMapper):
    """Asks an API LLM to correct only the query of each QA pair against the sample's text, keeping
    it answerable by the response; the whole answer (stripped) becomes the new query.
    Parameters as ``calibrate_qa_mapper``.
    """

    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "请对照【参考信息】修正问答对中的【问题】，让它更准确、更详尽，并且原来的回答仍能回答它。只输出修正后的问题，不要输出其他内容。"
    )

    def parse_output(self, raw: str):
        return raw.strip(), None
