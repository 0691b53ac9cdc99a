import sys

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.strip_characters import strip_special
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("remove_long_words_mapper")
class RemoveLongWordsMapper(Mapper):
    """Deletes words whose length is outside [min_len, max_len]. Words are the pieces between
    spaces, tabs and newlines; a word longer than ``max_len`` is still kept when, once the
    punctuation, digits, symbols and emoji at its ends are stripped, its length is in range.
    The text is rebuilt from the kept words: runs of spaces become one space, and empty lines
    and empty tab-separated cells are dropped."""

    writes_text_only = True  # rewrites only the text field

    def __init__(self, min_len: int = 1, max_len: int = sys.maxsize, **kwargs):
        """
        :param min_len: shortest word kept, in characters
        :param max_len: longest word kept, in characters (longer words get a second chance
            after stripping special characters from their ends)
        """
        super().__init__(**kwargs)
        self.min_len = min_len
        self.max_len = max_len

    def _keep(self, word: str) -> bool:
        n = len(word)
        if n > self.max_len:
            return self.min_len <= len(strip_special(word)) <= self.max_len
        return n >= self.min_len

    def _clean(self, text: str) -> str:
        lo, hi, keep = self.min_len, self.max_len, self._keep
        lines = []
        for line in text.split("\n"):
            cells = []
            for cell in line.split("\t"):
                words = [w for w in cell.split(" ") if w and (lo <= len(w) <= hi or keep(w))]
                if words:
                    cells.append(" ".join(words))
            if cells:
                lines.append("\t".join(cells))
        return "\n".join(lines)

    def process_batched(self, samples):
        samples[self.text_key] = [self._clean(t) for t in samples[self.text_key]]
        return samples
