from data_juicer.ops.common.dialog_llm import DialogScoreLLMMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_clarification_quality_mapper")
class DialogClarificationQualityMapper(DialogScoreLLMMapper):
    """Judges with an LLM (1-5) whether the assistant handles an unclear request well: a few pointed
    clarifying questions when key details are missing, a direct answer when the request is already
    clear.

    The prompt is the last ``max_round`` turns (``history_key`` pairs plus ``query``/``response``)
    with the final reply marked as the part to judge; the answer must be a JSON object
    ``{"score", "reason"}``. ``meta.dialog_clarification_quality`` gets ``{"score": 1.0-5.0, "reason", "eval_kind":
    "dialog_turn"}`` (a sample with no turns gets ``{"skipped": true, "reason": "empty_input"}``).
    An answer that is not such an object after ``try_num`` requests sends the sample to the error
    ledger with the raw answer (Data-Juicer writes ``{"error": "json_parse_failed"}`` instead).
    """

    META_KEY = MetaKeys.dialog_clarification_quality
    RUBRIC = (
        "Judge how the assistant deals with ambiguity in the current user message.\n"
        "If the request is vague or lacks details needed to act, a good reply asks a small number of "
        "focused questions instead of guessing or interrogating the user.\n"
        "If the request can already be acted on, solving it directly deserves a high score.\n"
        "Brief follow-ups such as status checks usually need no new questions: a concise progress "
        "or next-step answer can score 3-5 unless something essential is clearly missing.\n"
        "1 = answers blindly where clarification was needed; 5 = well-aimed questions, or a good "
        "direct answer where none were needed."
    )
