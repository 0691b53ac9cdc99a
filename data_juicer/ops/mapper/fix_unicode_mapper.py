import re
from typing import Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.lazy import require

_FORMS = ("NFC", "NFKC", "NFD", "NFKD")
# a line of printable ASCII (plus tab) without '&' is one ftfy leaves exactly as it is
_NEEDS_FTFY = re.compile(r"[^\t\n\x20-\x25\x27-\x7e]")


def fix_text_by_line(text: str, config, fix_text) -> str:
    """``ftfy.fix_text(text, config)``, calling ftfy only on the lines it could change.

    ftfy fixes a text line by line, and once a line contains '<' it stops unescaping HTML
    entities for the rest of the text; this keeps both rules, so the result is identical.
    """
    if _NEEDS_FTFY.search(text) is None:
        return text
    out, pos, end = [], 0, len(text)
    while pos < end:
        stop = text.find("\n", pos) + 1 or end
        line = text[pos:stop]
        pos = stop
        if config.unescape_html == "auto" and "<" in line:
            config = config._replace(unescape_html=False)
        out.append(line if _NEEDS_FTFY.search(line) is None else fix_text(line, config))
    return "".join(out)


@OPERATORS.register_module("fix_unicode_mapper")
class FixUnicodeMapper(Mapper):
    """Repairs broken Unicode with ftfy (mojibake, HTML entities in plain text, curly quotes,
    ligatures, full-width letters, terminal escapes, line breaks, control characters) and then
    applies a Unicode normalization form."""

    requires = ("ftfy",)

    def __init__(self, normalization: Optional[str] = None, **kwargs):
        """
        :param normalization: Unicode normalization form, one of NFC, NFKC, NFD, NFKD (any case);
            empty or None means NFC
        """
        super().__init__(**kwargs)
        form = normalization.upper() if normalization else "NFC"
        if form not in _FORMS:
            raise ValueError(f"{self.name}: normalization {normalization!r} is not supported; "
                             f"use one of {', '.join(_FORMS)}")
        self.normalization = form
        self._config = None

    def process_batched(self, samples):
        ftfy = require("ftfy", who=self.name)
        if self._config is None:
            self._config = ftfy.TextFixerConfig(explain=False, normalization=self.normalization)
        fix, config = ftfy.fix_text, self._config
        samples[self.text_key] = [fix_text_by_line(t, config, fix) for t in samples[self.text_key]]
        return samples
