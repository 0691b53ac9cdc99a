import re

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

_CHINESE = "\u4e00-\u9fa5"  # CJK Unified Ideographs, up to U+9FA5
_ALPHABET = "A-Za-z"
_NUMBER = "0-9"
_PUNCTUATION = ".， ,\\-。%《*》/•、&＆(—)（+）：？!！“”·"  # includes the ASCII space


@OPERATORS.register_module("remove_non_chinese_character_mapper")
class RemoveNonChineseCharacterlMapper(Mapper):
    """Removes every character that is not a Chinese character (U+4E00 to U+9FA5), optionally
    keeping ASCII letters, ASCII digits, and a fixed set of punctuation (with the ASCII space)."""

    writes_text_only = True  # rewrites only the text field

    def __init__(self, keep_alphabet: bool = True, keep_number: bool = True, keep_punc: bool = True, **kwargs):
        """
        :param keep_alphabet: keep ASCII letters A-Z and a-z
        :param keep_number: keep ASCII digits 0-9
        :param keep_punc: keep the space and the punctuation ``.， ,-。%《*》/•、&＆(—)（+）：？!！“”·``
        """
        super().__init__(**kwargs)
        self.keep_alphabet = keep_alphabet
        self.keep_number = keep_number
        self.keep_punc = keep_punc
        kept = _CHINESE + _ALPHABET * keep_alphabet + _NUMBER * keep_number + _PUNCTUATION * keep_punc
        self._removed = re.compile(f"[^{kept}]+")

    def process_batched(self, samples):
        sub = self._removed.sub
        samples[self.text_key] = [sub("", t) for t in samples[self.text_key]]
        return samples
