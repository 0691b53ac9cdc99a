from typing import Optional

from data_juicer.ops.common.dialog_llm import LABEL_PARAM_DOCS, DialogLabelLLMMapper, label_note
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_topic_detection_mapper")
class DialogTopicDetectionMapper(DialogLabelLLMMapper):
    """Asks an LLM for the topic the user talks about at every user turn of a dialog.

    The turns are the ``history_key`` pairs plus ``query``/``response``. Each turn's prompt
    holds the candidate topics (if given), the earlier turns with their analyses and labels,
    and the current query; the answer's ``话题分析：`` line is the analysis and its ``话题类别：``
    line the labels. ``meta[labels_key]`` gets the labels of all turns (de-duplicated, first seen
    first) and ``meta[analysis_key]`` one analysis per turn. Samples that already have both keys
    are skipped. A turn whose answer has no analysis after ``try_num`` requests sends the sample
    to the error ledger with the raw answer (Data-Juicer keeps an empty analysis).
    """

    MODE = "topic"
    DEFAULT_SYSTEM_PROMPT = (
        "你要分析用户与 LLM 的多轮对话，判断用户在每一轮提问中讨论的话题。\n"
        "要求：\n"
        "- 针对当前这一轮用户的话，先写一句话题分析，再给出话题类别；不要续写对话。\n"
        "- 严格按照下面样例的格式输出：\n"
        "用户：最近想学做饭，从哪道菜开始比较好？\n"
        "话题分析：用户在询问烹饪入门，涉及家常菜的选择。\n"
        "话题类别：烹饪\n"
        "LLM：可以从番茄炒蛋开始，步骤少、容错高。\n"
        "用户：番茄炒蛋要先放蛋还是先放番茄？\n"
        "话题分析：用户继续追问这道菜的具体做法。\n"
        "话题类别：烹饪\n"
        "LLM：一般先把蛋炒到半熟盛出，再炒番茄，最后合在一起。\n"
        "用户：对了，周末去哪里爬山人少一些？\n"
        "话题分析：用户换了话题，询问周末户外出行的地点。\n"
        "话题类别：旅游，户外运动"
    )
    DEFAULT_CANDIDATES_TEMPLATE = "备选话题类别：[{candidate_str}]"
    DEFAULT_ANALYSIS_TEMPLATE = "话题分析：{analysis}\n"
    DEFAULT_LABELS_TEMPLATE = "话题类别：{labels}\n"
    DEFAULT_ANALYSIS_PATTERN = "话题分析：(.*?)\n"
    DEFAULT_LABELS_PATTERN = "话题类别：(.*?)($|\n)"
    LANG_NOTE = label_note("话题分析", "话题类别")

    def __init__(self, api_model: str = "gpt-4o", topic_candidates: Optional[list[str]] = None,
                 max_round: int = 10, *, labels_key: str = MetaKeys.dialog_topic_labels,
                 analysis_key: str = MetaKeys.dialog_topic_labels_analysis, **kwargs):
        super().__init__(api_model, max_round, labels_key=labels_key, analysis_key=analysis_key, **kwargs)
        self.topic_candidates = topic_candidates
        self.candidates = topic_candidates

    __init__.__doc__ = LABEL_PARAM_DOCS + """
        :param topic_candidates: the topics to choose from (None: open-domain labels)"""
