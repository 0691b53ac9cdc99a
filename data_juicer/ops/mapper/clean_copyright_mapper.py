import regex

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

# a C-style /* ... */ block comment (ends at the first "*/")
_BLOCK_COMMENT = regex.compile(r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/")
_COPYRIGHT = regex.compile("copyright", regex.IGNORECASE)
_LINE_COMMENT_MARKS = ("//", "#", "--")


def clean_copyright(text: str) -> str:
    """Drop the first /* */ comment if it mentions copyright; with no block comment at all, drop
    the leading run of comment (//, #, --) and empty lines."""
    start = text.find("/*")
    if start >= 0:
        m = _BLOCK_COMMENT.search(text, start)
        if m is not None:
            if _COPYRIGHT.search(text, m.start(), m.end()):
                return text[:m.start()] + text[m.end():]
            return text
    pos, n = 0, len(text)
    while True:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        if end != pos and not text.startswith(_LINE_COMMENT_MARKS, pos, end):
            return text[pos:] if pos else text
        if nl < 0:
            return ""
        pos = nl + 1


@OPERATORS.register_module("clean_copyright_mapper")
class CleanCopyrightMapper(Mapper):
    """Removes a copyright header from code-like text: the first ``/* ... */`` block comment when
    it contains "copyright" (any case); if the text has no block comment, the leading lines that
    are empty or start with ``//``, ``#`` or ``--``."""

    writes_text_only = True  # rewrites only the text field

    def process_batched(self, samples):
        samples[self.text_key] = [clean_copyright(t) for t in samples[self.text_key]]
        return samples
