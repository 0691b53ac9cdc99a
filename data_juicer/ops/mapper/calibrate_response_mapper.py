import re
from typing import ClassVar

from data_juicer.ops.mapper.calibrate_qa_mapper import CalibrateQAMapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("calibrate_response_mapper")
class CalibrateResponseMapper(CalibrateQAMapper):
    """Asks an API LLM to correct only the response of each QA pair against the sample's text, so
    it still answers the question; the whole answer (stripped) becomes the new response, or, with
    a custom ``output_pattern``, its last group when it matches. Parameters as ``calibrate_qa_mapper``.
    """

    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "请对照【参考信息】修正问答对中的【回答】，让它更准确、更详尽，并且仍然回答原来的问题。只输出修正后的回答，不要输出其他内容。"
    )

    def parse_output(self, raw: str):
        if self.output_pattern != self.DEFAULT_OUTPUT_PATTERN:
            m = re.match(self.output_pattern, raw)
            if m and m.lastindex:
                return None, m.group(m.lastindex).strip()
        return None, raw.strip()
