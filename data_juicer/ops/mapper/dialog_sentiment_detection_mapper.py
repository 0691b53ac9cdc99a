from typing import Optional

from data_juicer.ops.common.dialog_llm import LABEL_PARAM_DOCS, DialogLabelLLMMapper, label_note
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_sentiment_detection_mapper")
class DialogSentimentDetectionMapper(DialogLabelLLMMapper):
    """Asks an LLM for the sentiments the user shows at every user turn of a dialog.

    The turns are the ``history_key`` pairs plus ``query``/``response``. Each turn's prompt
    holds the candidate sentiments (if given), the earlier turns with their analyses and labels,
    and the current query; the answer's ``情感分析：`` line is the analysis and its ``情感类别：``
    line the labels. ``meta[labels_key]`` gets the labels of all turns (de-duplicated, first seen
    first) and ``meta[analysis_key]`` one analysis per turn. Samples that already have both keys
    are skipped. A turn whose answer has no analysis after ``try_num`` requests sends the sample
    to the error ledger with the raw answer (Data-Juicer keeps an empty analysis).
    """

    MODE = "sentiment"
    DEFAULT_SYSTEM_PROMPT = (
        "你要分析用户与 LLM 的多轮对话，判断用户在每一轮中流露出的情绪。\n"
        "要求：\n"
        "- 针对当前这一轮用户的话，先写一句情感分析，再列出情感类别；不要续写对话。\n"
        "- 严格按照下面样例的格式输出：\n"
        "用户：快递又延误了，这已经是第三次了！\n"
        "情感分析：用户因为多次延误而明显不满，语气急躁。\n"
        "情感类别：愤怒、不满\n"
        "LLM：非常抱歉给你带来困扰，我马上帮你查询物流并催促派送。\n"
        "用户：查到了吗？我明天要出差，真担心收不到。\n"
        "情感分析：用户仍在等待结果，并对能否按时收货感到忧虑。\n"
        "情感类别：焦虑、担忧\n"
        "LLM：已查到，包裹今晚八点前送达，派送员会提前电话联系你。\n"
        "用户：太好了，谢谢你这么快帮我处理。\n"
        "情感分析：问题得到解决，用户感到轻松并表达感谢。\n"
        "情感类别：欣慰、感激"
    )
    DEFAULT_CANDIDATES_TEMPLATE = "备选情感类别：[{candidate_str}]"
    DEFAULT_ANALYSIS_TEMPLATE = "情感分析：{analysis}\n"
    DEFAULT_LABELS_TEMPLATE = "情感类别：{labels}\n"
    DEFAULT_ANALYSIS_PATTERN = "情感分析：(.*?)\n"
    DEFAULT_LABELS_PATTERN = "情感类别：(.*?)($|\n)"
    LANG_NOTE = label_note("情感分析", "情感类别")

    def __init__(self, api_model: str = "gpt-4o", sentiment_candidates: Optional[list[str]] = None,
                 max_round: int = 10, *, labels_key: str = MetaKeys.dialog_sentiment_labels,
                 analysis_key: str = MetaKeys.dialog_sentiment_labels_analysis, **kwargs):
        super().__init__(api_model, max_round, labels_key=labels_key, analysis_key=analysis_key, **kwargs)
        self.sentiment_candidates = sentiment_candidates
        self.candidates = sentiment_candidates

    __init__.__doc__ = LABEL_PARAM_DOCS + """
        :param sentiment_candidates: the sentiments to choose from (None: open-domain labels)"""
