from typing import ClassVar

from data_juicer.ops.mapper.optimize_qa_mapper import OptimizeQAMapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("optimize_response_mapper")
class OptimizeResponseMapper(OptimizeQAMapper):
    """Asks an LLM to rewrite only the response of each QA pair to be more detailed and specific
    while still answering the question; the whole answer (stripped) becomes the new response.
    Parameters as ``optimize_qa_mapper``.
    """

    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "请把问答对中的回答改写得更详细、更具体，同时保证它仍然回答原来的问题。只输出改写后的回答本身，不要输出其他内容。"
    )

    def parse_output(self, raw: str):
        return None, raw.strip()
