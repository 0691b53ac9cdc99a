from data_juicer.ops.common.dialog_llm import DialogScoreLLMMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_memory_consistency_mapper")
class DialogMemoryConsistencyMapper(DialogScoreLLMMapper):
    """Judges with an LLM (1-5) whether the final assistant turn keeps to the constraints, preferences
    and facts the user gave earlier in the dialog.

    The prompt is the last ``max_round`` turns (``history_key`` pairs plus ``query``/``response``)
    with the final reply marked as the part to judge; the answer must be a JSON object
    ``{"score", "reason"}``. ``meta.dialog_memory_consistency`` gets ``{"score": 1.0-5.0, "reason", "eval_kind":
    "dialog_turn"}`` (a sample with no turns gets ``{"skipped": true, "reason": "empty_input"}``).
    An answer that is not such an object after ``try_num`` requests sends the sample to the error
    ledger with the raw answer (Data-Juicer writes ``{"error": "json_parse_failed"}`` instead).
    """

    META_KEY = MetaKeys.dialog_memory_consistency
    RUBRIC = (
        "You judge dialog quality from the transcript only. Does the assistant reply to score keep "
        "the preferences, constraints and facts the user stated in earlier turns? Forgetting them "
        "or contradicting itself lowers the score.\n"
        "1 = serious violation or forgetting; 3 = mostly consistent with gaps; 5 = every key "
        "constraint respected.\n"
        "Do not assume facts the transcript does not support."
    )
