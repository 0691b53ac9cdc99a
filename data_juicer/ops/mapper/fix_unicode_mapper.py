from typing import Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.lazy import require

_FORMS = ("NFC", "NFKC", "NFD", "NFKD")


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
        samples[self.text_key] = [fix(t, config) for t in samples[self.text_key]]
        return samples
