import re
from typing import Optional

from data_juicer.ops.common.extract_llm import COMMON_DOCS, MetaLLMMapper, split_text_by_punctuation
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("extract_keyword_mapper")
class ExtractKeywordMapper(MetaLLMMapper):
    """Asks an LLM for high-level keywords that sum up the main concepts and themes of the text.

    The answer's ``("content_keywords" ...)`` records (``output_pattern``) are split on
    punctuation into ``meta[keyword_key]``; samples that already have it are skipped. An answer
    without a keyword after ``try_num`` requests sends the sample to the error ledger with the raw
    answer (Data-Juicer stores an empty list).
    """

    DEFAULT_PROMPT_TEMPLATE = """-Goal-
Read the text below and name the high-level keywords that capture its main concepts, themes or topics: the overarching ideas of the whole document, not individual details.

-Format-
Write the keywords as ("content_keywords" "<keyword 1>, <keyword 2>, ...").
Use the language of the text. When you are done, output {completion_delimiter}

######################
-Examples-
######################
Example 1:
Text:
```
The harbour town had lived on fishing for three centuries. When the cannery closed, the younger families left for the city, and the old net lofts were sold one by one to weekend visitors. Mara, who had run the ferry since her father retired, watched the timetable shrink each winter and wondered who would still be there to ride it.
```
################
Output:
("content_keywords" "economic decline, migration, community change, tradition"){completion_delimiter}
#############################
Example 2:
Text:
```
实验室第一次让机械臂在没有预设程序的情况下学会了抓取鸡蛋。研究员们反复调整奖励函数，失败了上百次之后，机械臂终于学会了放慢速度、减小力度。项目负责人说，真正的难点不是力量，而是分寸。
```
#############
Output:
("content_keywords" "强化学习, 机器人控制, 试错, 精细操作"){completion_delimiter}
#############################
-Real Data-
######################
Text:
```
{input_text}
```
######################
Output:
"""
    DEFAULT_COMPLETION_DELIMITER = "<|COMPLETE|>"
    DEFAULT_OUTPUT_PATTERN = r'\("content_keywords"(.*?)\)'

    def __init__(self, api_model: str = "gpt-4o", *, keyword_key: str = MetaKeys.keyword,
                 api_endpoint: Optional[str] = None, response_path: Optional[str] = None,
                 prompt_template: Optional[str] = None, completion_delimiter: Optional[str] = None,
                 output_pattern: Optional[str] = None, try_num: int = 3, drop_text: bool = False,
                 model_params: dict = {}, sampling_params: dict = {}, **kwargs):  # noqa: B006
        super().__init__(**kwargs)
        self.keyword_key = keyword_key
        self.prompt_template = prompt_template or self.DEFAULT_PROMPT_TEMPLATE
        self.completion_delimiter = completion_delimiter or self.DEFAULT_COMPLETION_DELIMITER
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.init_common(api_model, api_endpoint, response_path, try_num, drop_text, model_params, sampling_params)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param keyword_key: meta key receiving the keywords
        :param prompt_template: the prompt (``{completion_delimiter}``, ``{input_text}``)
        :param completion_delimiter: the end-of-answer marker named in the prompt
        :param output_pattern: regex whose group 1 is a keyword record""" + COMMON_DOCS

    def done_keys(self):
        return (self.keyword_key,)

    def messages(self, row, meta):
        return [{"role": "user", "content": self.prompt_template.format(
            completion_delimiter=self.completion_delimiter, input_text=row[self.text_key])}]

    def parse(self, text):
        words = [w for rec in re.findall(self.output_pattern, text or "", re.VERBOSE | re.DOTALL)
                 for w in split_text_by_punctuation(rec)]
        return words or None

    def write(self, meta, value):
        meta[self.keyword_key] = value
