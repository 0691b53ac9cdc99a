from typing import Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.regex_patterns import TokenGatedSub, compile_pattern
from data_juicer.ops.registry import OPERATORS

# dotted-quad IPv4 (each part 0-255, no leading zeros) or full 8-group IPv6 (no "::" shorthand)
_IPV4_PART = r"(?:1[0-9][0-9]|2[0-4][0-9]|25[0-5]|[1-9][0-9]|[0-9])"
DEFAULT_IP_PATTERN = rf"(?:{_IPV4_PART}\.){{3}}{_IPV4_PART}|([\da-fA-F]{{1,4}}:){{7}}[\da-fA-F]{{1,4}}"
# same matches: the lookahead (a digit, or the first IPv6 group) only lets the engine skip
# positions that cannot start an address
_FAST_IP_PATTERN = rf"(?=\d|[\da-fA-F]{{1,4}}:)(?:{DEFAULT_IP_PATTERN})"

# every address holds a digit.digit (IPv4) or hex:hex (IPv6) and no whitespace; two gates, matched
# from the '.' and from the ':' (a gate opening with one literal character is scanned for ~3x faster
# than the one class [.:])
_IP_GATE = (r"\.(?<=[0-9]\.)[0-9]", r":(?<=[\da-fA-F]:)[\da-fA-F]")


@OPERATORS.register_module("clean_ip_mapper")
class CleanIpMapper(Mapper):
    """Removes IPv4 and IPv6 addresses from the text, or replaces each with ``repl``."""

    writes_text_only = True  # rewrites only the text field

    def __init__(self, pattern: Optional[str] = None, repl: str = "", **kwargs):
        """
        :param pattern: regular expression of what to clean (``regex`` syntax, DOTALL; a quoted
            raw literal ``r'...'`` is accepted); default: IPv4 dotted quads and full IPv6 addresses
        :param repl: replacement for each match (may use ``\\1`` group references)
        """
        super().__init__(**kwargs)
        self.pattern = pattern
        self.repl = repl
        self._regex = compile_pattern(_FAST_IP_PATTERN if pattern is None else pattern, self.name)
        # the built-in pattern is applied only to the words that can hold a match
        self._sub = TokenGatedSub(self._regex, _IP_GATE).__call__ if pattern is None else self._regex.sub

    def process_batched(self, samples):
        sub, repl = self._sub, self.repl
        samples[self.text_key] = [sub(repl, t) for t in samples[self.text_key]]
        return samples
