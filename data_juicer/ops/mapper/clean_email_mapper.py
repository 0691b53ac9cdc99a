import re
from typing import Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.regex_patterns import compile_pattern
from data_juicer.ops.registry import OPERATORS

# local part, "@", lowercase domain with a dot (the pattern Data-Juicer recipes rely on)
DEFAULT_EMAIL_PATTERN = r"[A-Za-z0-9.\-+_]+@[a-z0-9.\-+_]+\.[a-z]+"


@OPERATORS.register_module("clean_email_mapper")
class CleanEmailMapper(Mapper):
    """Removes email addresses from the text, or replaces each with ``repl``."""

    writes_text_only = True  # rewrites only the text field

    def __init__(self, pattern: Optional[str] = None, repl: str = "", **kwargs):
        """
        :param pattern: regular expression of what to clean (``regex`` syntax, DOTALL; a quoted
            raw literal ``r'...'`` is accepted); default: a common email address pattern
        :param repl: replacement for each match (may use ``\\1`` group references)
        """
        super().__init__(**kwargs)
        self.pattern = pattern
        self.repl = repl
        if pattern is None:
            # ASCII-only classes, so stdlib re matches exactly like `regex`, and is faster here
            self._regex = re.compile(DEFAULT_EMAIL_PATTERN, flags=re.DOTALL)
        else:
            self._regex = compile_pattern(pattern, self.name)
        # the default pattern cannot match without an "@": skip the regex engine on such texts
        self._needs_at = pattern is None

    def process_batched(self, samples):
        sub, repl = self._regex.sub, self.repl
        if self._needs_at:
            samples[self.text_key] = [sub(repl, t) if "@" in t else t for t in samples[self.text_key]]
        else:
            samples[self.text_key] = [sub(repl, t) for t in samples[self.text_key]]
        return samples
