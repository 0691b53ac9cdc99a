from typing import Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.regex_patterns import TokenGatedSub, compile_pattern
from data_juicer.ops.registry import OPERATORS

# scheme:// or scheme:x, www., or domain.tld/ ; then URL characters with balanced parentheses
# (up to two levels), not ending in punctuation. Case-insensitive.
_PAREN = r"\(([^\s()<>]+|(\([^\s()<>]+\)))*\)"
DEFAULT_LINK_PATTERN = (
    r"(?i)\b("
    r"(?:[a-z][\w-]+:(?:\/{1,3}|[a-z0-9%])|www\d{0,3}[.]|[a-z0-9.\-]+[.][a-z]{2,4}\/)"
    rf"(?:[^\s()<>]+|{_PAREN})+"
    rf"(?:{_PAREN}|[^\s`!()\[\]{{}};:\'\".,<>?«»“”‘’])"
    r")"
)

# every link holds no whitespace and one of: a ':' after a word character or '-' and before a
# non-space (scheme:), a '.' before 2-4 non-spaces and a '/' (domain.tld/), or 'www'; the gate matches
# at that ':' or '.' or the third 'w' (a pattern opening with one character class is scanned for fast).
# Sentence periods, "Note: x" and lone '/' no longer send their word through the full pattern.
_LINK_GATE = r"[:.wW](?:(?<=[\w-]:)(?=\S)|(?<=\.)(?=\S{2,4}/)|(?<=[wW]{3}))"


@OPERATORS.register_module("clean_links_mapper")
class CleanLinksMapper(Mapper):
    """Removes links (http/https/ftp and other ``scheme:`` URLs, ``www.`` hosts, ``domain.tld/``
    paths) from the text, or replaces each with ``repl``."""

    writes_text_only = True  # rewrites only the text field

    def __init__(self, pattern: Optional[str] = None, repl: str = "", **kwargs):
        """
        :param pattern: regular expression of what to clean (``regex`` syntax, DOTALL; a quoted
            raw literal ``r'...'`` is accepted); default: a URL pattern
        :param repl: replacement for each match (may use ``\\1`` group references)
        """
        super().__init__(**kwargs)
        self.pattern = pattern
        self.repl = repl
        self._regex = compile_pattern(DEFAULT_LINK_PATTERN if pattern is None else pattern, self.name)
        # the built-in pattern is applied only to the words that can hold a match
        self._sub = TokenGatedSub(self._regex, _LINK_GATE).__call__ if pattern is None else self._regex.sub

    def process_batched(self, samples):
        sub, repl = self._sub, self.repl
        samples[self.text_key] = [sub(repl, t) for t in samples[self.text_key]]
        return samples
