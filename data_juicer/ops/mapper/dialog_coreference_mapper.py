from data_juicer.ops.common.dialog_llm import DialogScoreLLMMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_coreference_mapper")
class DialogCoreferenceMapper(DialogScoreLLMMapper):
    """Judges with an LLM (1-5) whether the reply resolves the pronouns and references of the latest
    user turn (it, that one, the earlier file, ...) to the right things.

    The prompt is the last ``max_round`` turns (``history_key`` pairs plus ``query``/``response``)
    with the final reply marked as the part to judge; the answer must be a JSON object
    ``{"score", "reason"}``. ``meta.dialog_coreference`` gets ``{"score": 1.0-5.0, "reason", "eval_kind":
    "dialog_turn"}`` (a sample with no turns gets ``{"skipped": true, "reason": "empty_input"}``).
    An answer that is not such an object after ``try_num`` requests sends the sample to the error
    ledger with the raw answer (Data-Juicer writes ``{"error": "json_parse_failed"}`` instead).
    """

    META_KEY = MetaKeys.dialog_coreference
    RUBRIC = (
        "Judge reference resolution. The current user message may use pronouns or references "
        "(it, that, the second one, the file from before) whose meaning comes from earlier turns.\n"
        "Check whether the assistant reply to score understood them as the user meant.\n"
        "1 = clearly resolved to the wrong thing; 3 = plausible but ambiguous; 5 = precise and correct."
    )
