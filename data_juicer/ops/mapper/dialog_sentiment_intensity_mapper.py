import re
from typing import Optional

from data_juicer.ops.common.dialog_llm import TURN_PARAM_DOCS, DialogTurnLLMMapper, label_note
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("dialog_sentiment_intensity_mapper")
class DialogSentimentIntensityMapper(DialogTurnLLMMapper):
    """Asks an LLM for the user's sentiment intensity, an integer from -5 (very negative) to 5
    (very positive), at every user turn of a dialog.

    Each turn's prompt holds the earlier turns with their analyses and intensities and the
    current query; the answer's ``情绪分析：`` line is the analysis and its ``情绪值：`` line the
    intensity (0 when that line is missing; a value that is not an integer makes the request
    be sent again). ``meta[intensities_key]`` gets one intensity per turn and
    ``meta[analysis_key]`` one analysis per turn; samples that already have both are skipped. A
    turn whose answer has no analysis after ``try_num`` requests sends the sample to the error
    ledger with the raw answer.
    """

    MODE = "intensity"
    VALUE_NAME = "intensity"
    DEFAULT_SYSTEM_PROMPT = (
        "你要分析用户与 LLM 的多轮对话，判断用户在每一轮中的情绪强度及其变化。\n"
        "要求：\n"
        "- 情绪值是 -5 到 5 之间的整数：-5 为极度负面，0 为中性，5 为极度正面。\n"
        "- 只分析当前这一轮，不要续写对话。\n"
        "- 先写一句情绪分析，再给出情绪值，严格按照下面样例的格式输出：\n"
        "用户：我想退掉上周买的耳机，怎么操作？\n"
        "情绪分析：用户平静地提出退货需求，还没有得到回复，情绪中性。\n"
        "情绪值：0\n"
        "LLM：请在订单页点击“申请售后”，选择退货并填写原因即可。\n"
        "用户：找到了，挺方便的。\n"
        "情绪分析：问题被顺利解决，用户略感满意。\n"
        "情绪值：1\n"
        "LLM：另外，今天下单的新品耳机有八折优惠，要不要看看？\n"
        "用户：我是要退货，别给我推销了。\n"
        "情绪分析：LLM 答非所问地推销，用户明显不耐烦，情绪转为负面。\n"
        "情绪值：-2\n"
        "LLM：抱歉打扰了。退货申请提交后，快递员会在两天内上门取件。\n"
        "用户：行吧，这样还可以。\n"
        "情绪分析：得到了需要的信息，用户的不满有所缓和。\n"
        "情绪值：-1"
    )
    DEFAULT_ANALYSIS_TEMPLATE = "情绪分析：{analysis}\n"
    DEFAULT_INTENSITY_TEMPLATE = "情绪值：{intensity}\n"
    DEFAULT_ANALYSIS_PATTERN = "情绪分析：(.*?)\n"
    DEFAULT_INTENSITY_PATTERN = "情绪值：(.*?)($|\n)"
    LANG_NOTE = label_note("情绪分析", "情绪值")
    LANG_NOTE = dict(LANG_NOTE, zh="\n\n【输出语言】「情绪分析」之后请用简体中文，「情绪值」之后只写整数。")

    def __init__(self, api_model: str = "gpt-4o", max_round: int = 10, *,
                 intensities_key: Optional[str] = MetaKeys.dialog_sentiment_intensity,
                 analysis_key: Optional[str] = MetaKeys.dialog_sentiment_intensity_analysis,
                 intensity_template: Optional[str] = None, intensity_pattern: Optional[str] = None, **kwargs):
        # Data-Juicer's published config_all.yaml passes null for both: null means the default key
        analysis_key = analysis_key or MetaKeys.dialog_sentiment_intensity_analysis
        super().__init__(api_model, max_round, analysis_key=analysis_key, **kwargs)
        self.intensities_key = self.value_key = intensities_key or MetaKeys.dialog_sentiment_intensity
        self.intensity_template = self.value_template = intensity_template or self.DEFAULT_INTENSITY_TEMPLATE
        self.intensity_pattern = self.value_pattern = intensity_pattern or self.DEFAULT_INTENSITY_PATTERN

    __init__.__doc__ = TURN_PARAM_DOCS + """
        :param intensities_key: meta key of the per-turn intensities
        :param intensity_template: how an earlier turn's intensity is written (``{intensity}``)
        :param intensity_pattern: regex whose group 1 is the intensity in the answer"""

    def value_from(self, match: Optional[re.Match]) -> int:
        return int(match.group(1)) if match else 0  # a non-integer raises ValueError: asked again

    def finish(self, meta: dict, analyses: list, values: list) -> None:
        meta[self.intensities_key] = values
        meta[self.analysis_key] = analyses
