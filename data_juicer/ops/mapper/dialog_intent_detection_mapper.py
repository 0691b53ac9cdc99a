from typing import Optional

from data_juicer.ops.common.dialog_llm import LABEL_PARAM_DOCS, DialogLabelLLMMapper, label_note
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_intent_detection_mapper")
class DialogIntentDetectionMapper(DialogLabelLLMMapper):
    """Asks an LLM for the user's intent at every user turn of a dialog.

    The turns are the ``history_key`` pairs plus ``query``/``response``. Each turn's prompt
    holds the candidate intents (if given), the earlier turns with their analyses and labels,
    and the current query; the answer's ``意图分析：`` line is the analysis and its ``意图类别：``
    line the labels. ``meta[labels_key]`` gets the labels of all turns (de-duplicated, first seen
    first) and ``meta[analysis_key]`` one analysis per turn. Samples that already have both keys
    are skipped. A turn whose answer has no analysis after ``try_num`` requests sends the sample
    to the error ledger with the raw answer (Data-Juicer keeps an empty analysis).
    """

    MODE = "intent"
    DEFAULT_SYSTEM_PROMPT = (
        "你要分析用户与 LLM 的多轮对话，判断用户在当前这一轮想要做什么（意图）。\n"
        "要求：\n"
        "- 先写一句意图分析，再给出意图类别；只针对当前这一轮，不要续写对话。\n"
        "- 严格按照下面样例的格式输出：\n"
        "用户：帮我查一下明天上海的天气。\n"
        "意图分析：用户想获取某地某天的天气信息。\n"
        "意图类别：信息查询\n"
        "LLM：明天上海多云，气温 18 到 24 度，午后可能有小雨。\n"
        "用户：那我要带伞吗？顺便提醒我早上七点出门。\n"
        "意图分析：用户一边征求出行建议，一边请求设置提醒。\n"
        "意图类别：寻求建议，设置提醒\n"
        "LLM：建议带一把折叠伞。已为你设置明早七点的出门提醒。\n"
        "用户：好的，多谢！\n"
        "意图分析：用户表示感谢，结束本次对话。\n"
        "意图类别：致谢"
    )
    DEFAULT_CANDIDATES_TEMPLATE = "备选意图类别：[{candidate_str}]"
    DEFAULT_ANALYSIS_TEMPLATE = "意图分析：{analysis}\n"
    DEFAULT_LABELS_TEMPLATE = "意图类别：{labels}\n"
    DEFAULT_ANALYSIS_PATTERN = "意图分析：(.*?)\n"
    DEFAULT_LABELS_PATTERN = "意图类别：(.*?)($|\n)"
    LANG_NOTE = label_note("意图分析", "意图类别")

    def __init__(self, api_model: str = "gpt-4o", intent_candidates: Optional[list[str]] = None,
                 max_round: int = 10, *, labels_key: str = MetaKeys.dialog_intent_labels,
                 analysis_key: str = MetaKeys.dialog_intent_labels_analysis, **kwargs):
        super().__init__(api_model, max_round, labels_key=labels_key, analysis_key=analysis_key, **kwargs)
        self.intent_candidates = intent_candidates
        self.candidates = intent_candidates

    __init__.__doc__ = LABEL_PARAM_DOCS + """
        :param intent_candidates: the intents to choose from (None: open-domain labels)"""
