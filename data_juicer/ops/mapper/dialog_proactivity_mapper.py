from data_juicer.ops.common.dialog_llm import DialogScoreLLMMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_proactivity_mapper")
class DialogProactivityMapper(DialogScoreLLMMapper):
    """Judges with an LLM (1-5) whether the reply takes useful initiative (next steps, relevant
    additions) without padding or digressions.

    The prompt is the last ``max_round`` turns (``history_key`` pairs plus ``query``/``response``)
    with the final reply marked as the part to judge; the answer must be a JSON object
    ``{"score", "reason"}``. ``meta.dialog_proactivity`` gets ``{"score": 1.0-5.0, "reason", "eval_kind":
    "dialog_turn"}`` (a sample with no turns gets ``{"skipped": true, "reason": "empty_input"}``).
    An answer that is not such an object after ``try_num`` requests sends the sample to the error
    ledger with the raw answer (Data-Juicer writes ``{"error": "json_parse_failed"}`` instead).
    """

    META_KEY = MetaKeys.dialog_proactivity
    RUBRIC = (
        "Judge whether the reply moves the conversation forward in a measured way: sensible next "
        "steps, relevant extra information, a short follow-up question where useful.\n"
        "1 = purely passive or mechanical; 5 = proactive but restrained, serving the user's goal.\n"
        "Penalize filler and off-topic tangents."
    )
