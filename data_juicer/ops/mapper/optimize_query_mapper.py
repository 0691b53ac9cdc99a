from typing import ClassVar

from data_juicer.ops.mapper.optimize_qa_mapper import OptimizeQAMapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("optimize_query_mapper")
class OptimizeQueryMapper(OptimizeQAMapper):
    """Asks an LLM to rewrite only the query of each QA pair to be more specific and detailed while
    the original response still answers it; the whole answer (stripped) becomes the new query.
    Parameters as ``optimize_qa_mapper``.
    """

    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "请把问答对中的【问题】改写得更具体、更详细，同时保证原来的回答依然能回答它。只输出改写后的问题本身，不要输出其他内容。"
    )

    def parse_output(self, raw: str):
        return raw.strip(), None
