from data_juicer.ops.common.dialog_llm import DialogScoreLLMMapper, clip
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys


@OPERATORS.register_module("agent_tool_relevance_mapper")
class AgentToolRelevanceMapper(DialogScoreLLMMapper):
    """Judges with an LLM (1-5) how well the tools an agent used fit the user's task.

    The prompt is the user request (``query_key``), the assistant reply with any tool trace
    (``response_key``), and the sample's tool list (``meta[tool_types_key]``, first 40) and primary
    tool (``meta[primary_tool_key]``), as written by ``agent_dialog_normalize_mapper`` /
    ``agent_tool_type_mapper``. ``meta.agent_tool_relevance`` gets ``{"score": 1.0-5.0, "reason",
    "eval_kind": "agent_tool"}``. An answer that is not a ``{"score", "reason"}`` JSON object after
    ``try_num`` requests sends the sample to the error ledger with the raw answer.
    """

    META_KEY = MetaKeys.agent_tool_relevance
    EVAL_KIND = "agent_tool"
    RUBRIC = (
        "From the user request, the assistant reply (tool traces may be embedded in it) and the "
        "inferred tool list, judge whether the tools chosen roughly suit the task: when tools were "
        "needed, were relevant ones used?\n"
        "Tool names in the list that also appear in the reply are weak evidence of intent; keep "
        "1-2 for clear contradictions between task and tools, not for a loosely worded request.\n"
        "Without a tool list, judge from the text alone; an empty list is not by itself a bad sign.\n"
        "1 = a severe mismatch; 5 = fitting and efficient tool use."
    )

    def user_content(self, sample: dict) -> str:
        q = clip(sample.get(self.query_key) or "", self.max_query_chars_for_prompt, "query truncated")
        r = clip(sample.get(self.response_key) or "", self.max_response_chars_for_prompt, "response truncated")
        meta = sample.get(Fields.meta) if isinstance(sample.get(Fields.meta), dict) else {}
        tools, primary = meta.get(self.tool_types_key), meta.get(self.primary_tool_key)
        tools_s = ", ".join(str(t) for t in tools[:40]) if isinstance(tools, list) else \
            ("" if tools is None else str(tools))
        prim_s = "" if primary is None else str(primary)
        return (f"### User request\n{q}\n### Assistant reply (may include tool trace)\n{r}\n"
                f"### Inferred tool list ({self.tool_types_key})\n{tools_s or '(none)'}\n"
                f"### Primary tool ({self.primary_tool_key})\n{prim_s or '(none)'}\n")
