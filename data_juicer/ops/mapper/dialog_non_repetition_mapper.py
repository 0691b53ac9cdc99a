from data_juicer.ops.common.dialog_llm import DialogScoreLLMMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_non_repetition_mapper")
class DialogNonRepetitionMapper(DialogScoreLLMMapper):
    """Judges with an LLM (1-5) whether the reply brings new information rather than repeating the
    assistant's earlier turns.

    The prompt is the last ``max_round`` turns (``history_key`` pairs plus ``query``/``response``)
    with the final reply marked as the part to judge; the answer must be a JSON object
    ``{"score", "reason"}``. ``meta.dialog_non_repetition`` gets ``{"score": 1.0-5.0, "reason", "eval_kind":
    "dialog_turn"}`` (a sample with no turns gets ``{"skipped": true, "reason": "empty_input"}``).
    An answer that is not such an object after ``try_num`` requests sends the sample to the error
    ledger with the raw answer (Data-Juicer writes ``{"error": "json_parse_failed"}`` instead).
    """

    META_KEY = MetaKeys.dialog_non_repetition
    RUBRIC = (
        "Compare the assistant reply to score with what the assistant already said in the earlier "
        "turns: is it mostly a rehash without anything new?\n"
        "1 = nearly a copy of earlier assistant text; 5 = new facts, conclusions or real progress.\n"
        "A little repeated politeness does not count."
    )
