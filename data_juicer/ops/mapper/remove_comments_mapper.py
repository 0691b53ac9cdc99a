import re

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

# a "%" not escaped by a backslash, with the character before it (a newline included) and the rest
# of the line; a bare "%" at the end of a line is kept
_INLINE = re.compile(r"[^\\]%.+$", flags=re.MULTILINE)
# a line starting with "%", with its newline
_WHOLE_LINE = re.compile(r"^%.*\n?", flags=re.MULTILINE)


@OPERATORS.register_module("remove_comments_mapper")
class RemoveCommentsMapper(Mapper):
    """Removes comments from LaTeX documents: inline comments (an unescaped ``%`` and the rest of
    its line, together with the one character before the ``%``) and comment lines (lines starting
    with ``%``, newline included). Inline comments are removed first."""

    writes_text_only = True  # rewrites only the text field

    def __init__(self, doc_type: str | list[str] = "tex", inline: bool = True, multiline: bool = True,
                 **kwargs):
        """
        :param doc_type: document type(s) of the input; only ``tex`` is handled, and every text is
            treated as LaTeX whatever this says
        :param inline: remove comments that follow other content on a line
        :param multiline: remove lines that start with ``%``
        """
        super().__init__(**kwargs)
        self.doc_type = doc_type
        self.inline = inline
        self.multiline = multiline

    def _clean(self, text: str) -> str:
        if self.inline:
            text = _INLINE.sub("", text)
        if self.multiline:
            text = _WHOLE_LINE.sub("", text)
        return text

    def process_batched(self, samples):
        if self.inline or self.multiline:
            samples[self.text_key] = [self._clean(t) if "%" in t else t for t in samples[self.text_key]]
        return samples
