from typing import Union

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.regex_patterns import compile_pattern
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("replace_content_mapper")
class ReplaceContentMapper(Mapper):
    """Replaces what matches a regular expression (or each of several, applied in order) with a
    replacement string."""

    writes_text_only = True  # rewrites only the text field

    def __init__(self, pattern: Union[str, list[str], None] = None, repl: Union[str, list[str]] = "", **kwargs):
        """
        :param pattern: regular expression(s) to replace (``regex`` syntax, DOTALL; a quoted raw
            literal ``r'...'`` is accepted); None leaves the text unchanged
        :param repl: replacement string (may use ``\\1`` group references), or a list giving the
            replacement of each pattern in order; one string is used for every pattern
        """
        super().__init__(**kwargs)
        self.pattern = pattern
        self.repl = repl
        patterns = [] if pattern is None else [pattern] if isinstance(pattern, str) else list(pattern)
        if isinstance(repl, str):
            repls = [repl] * len(patterns)
        else:
            repls = list(repl)
            if len(repls) < len(patterns):
                raise ValueError(f"{self.name}: got {len(patterns)} patterns but only {len(repls)} "
                                 "replacements; give one `repl` per pattern, or a single string for all")
        self._subs = [(compile_pattern(p, self.name), r) for p, r in zip(patterns, repls)]

    def process_batched(self, samples):
        texts = samples[self.text_key]
        for regex, repl in self._subs:
            texts = [regex.sub(repl, t) for t in texts]
        samples[self.text_key] = texts
        return samples
