from data_juicer.ops.common.dialog_llm import DialogScoreLLMMapper, clip
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("agent_trace_coherence_mapper")
class AgentTraceCoherenceMapper(DialogScoreLLMMapper):
    """Judges with an LLM (1-5) how coherent and goal-directed a flattened agent session is.

    The prompt is the session text (``text_key``, e.g. written by ``agent_dialog_normalize_mapper``)
    cut to ``trajectory_text_max_chars``; a sample without text gets ``{"skipped": true, "reason":
    "empty_input"}``. ``meta.agent_trace_coherence`` gets ``{"score": 1.0-5.0, "reason",
    "eval_kind": "agent_trace"}``. An answer that is not a ``{"score", "reason"}`` JSON object
    after ``try_num`` requests sends the sample to the error ledger with the raw answer.
    """

    META_KEY = MetaKeys.agent_trace_coherence
    EVAL_KIND = "agent_trace"
    RUBRIC = (
        "Read the excerpt as the trace of one agent session (tool output may be included).\n"
        "5 = a tight path that clearly serves the user's goal; 3 = gets there with redundant steps "
        "or mild drift; 1 = heavy off-topic churn, or no progress on reasonable sub-goals.\n"
        "If the excerpt looks cut off or incomplete, lean to 4-5 unless the incoherence is clear, "
        "and say so in `reason`; missing information alone is no reason for a 3."
    )

    def user_content(self, sample: dict) -> str:
        t = sample.get(self.text_key)
        if not isinstance(t, str) or not t.strip():
            return ""
        return ("### Session trace excerpt (may include tool output)\n"
                f"{clip(t, self.trajectory_text_max_chars, 'text truncated')}\n")
