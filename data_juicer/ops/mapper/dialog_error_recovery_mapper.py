from data_juicer.ops.common.dialog_llm import DialogScoreLLMMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_error_recovery_mapper")
class DialogErrorRecoveryMapper(DialogScoreLLMMapper):
    """Judges with an LLM (1-5) how the reply recovers when the user points out an earlier assistant
    mistake; without such a dispute the score is a neutral 5.

    The prompt is the last ``max_round`` turns (``history_key`` pairs plus ``query``/``response``)
    with the final reply marked as the part to judge; the answer must be a JSON object
    ``{"score", "reason"}``. ``meta.dialog_error_recovery`` gets ``{"score": 1.0-5.0, "reason", "eval_kind":
    "dialog_turn"}`` (a sample with no turns gets ``{"skipped": true, "reason": "empty_input"}``).
    An answer that is not such an object after ``try_num`` requests sends the sample to the error
    ledger with the raw answer (Data-Juicer writes ``{"error": "json_parse_failed"}`` instead).
    """

    META_KEY = MetaKeys.dialog_error_recovery
    RUBRIC = (
        "Look for the user explicitly correcting or disputing a mistake the assistant made in an "
        "earlier turn. If there is one, judge whether the assistant reply to score admits it, fixes "
        "it correctly and stays polite.\n"
        "Required: when the earlier turns and the current user message contain no such correction, "
        "give score 5 and say in `reason` that there was nothing to recover from. Do not give 1-3 "
        "just because the reply has no apology or no error is visible.\n"
        "1 = denies or argues when a correction was due; 5 = a clear, correct fix when one was due."
    )
