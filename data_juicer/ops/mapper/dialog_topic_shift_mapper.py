from data_juicer.ops.common.dialog_llm import DialogScoreLLMMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_topic_shift_mapper")
class DialogTopicShiftMapper(DialogScoreLLMMapper):
    """Judges with an LLM (1-5) whether the reply follows the user to a new topic instead of staying on
    an old thread; without a topic change it scores how well the reply fits the current message.

    The prompt is the last ``max_round`` turns (``history_key`` pairs plus ``query``/``response``)
    with the final reply marked as the part to judge; the answer must be a JSON object
    ``{"score", "reason"}``. ``meta.dialog_topic_shift`` gets ``{"score": 1.0-5.0, "reason", "eval_kind":
    "dialog_turn"}`` (a sample with no turns gets ``{"skipped": true, "reason": "empty_input"}``).
    An answer that is not such an object after ``try_num`` requests sends the sample to the error
    ledger with the raw answer (Data-Juicer writes ``{"error": "json_parse_failed"}`` instead).
    """

    META_KEY = MetaKeys.dialog_topic_shift
    RUBRIC = (
        "First decide, from the earlier turns and the current user message, whether the user has "
        "clearly moved to a different topic than in their previous turns.\n"
        "If not, only judge whether the assistant reply addresses the current message (3-5 when on "
        "topic and reasonable, 1-2 only when clearly irrelevant); do not claim the assistant is "
        "stuck on an old topic unless the user actually changed topic.\n"
        "If the user did change topic, judge whether the reply turns to the new request rather "
        "than the abandoned thread.\n"
        "1 = wrong focus when a switch was needed, or off topic; 5 = a clean switch, or a reply "
        "tightly aligned with the current request."
    )
