"""Compiling user-given regular expressions for the text-cleaning mappers.

Recipes written for Data-Juicer may quote a pattern as a Python raw-string literal
(``"r'\\d+'"``); the quotes and the ``r`` are dropped so such recipes keep working.
Patterns use the ``regex`` package (``\\p{Han}``, Unicode-aware ``\\w``/``\\b``) with DOTALL.
"""

from __future__ import annotations

import re

import regex


def unquote_raw_pattern(pattern: str) -> str:
    """``r'...'`` / ``r"..."`` -> ``...``; any other string is returned unchanged."""
    if len(pattern) > 2 and pattern[:2] in ("r'", 'r"') and pattern[-1] == pattern[1]:
        return pattern[2:-1]
    return pattern


def compile_pattern(pattern: str, who: str, param: str = "pattern") -> regex.Pattern:
    """Compile a recipe pattern (DOTALL), raising a ValueError that names the op and parameter."""
    if not isinstance(pattern, str):
        raise ValueError(f"{who}: `{param}` must be a string regular expression, got {type(pattern).__name__}")
    try:
        return regex.compile(unquote_raw_pattern(pattern), flags=regex.DOTALL)
    except regex.error as e:
        raise ValueError(f"{who}: `{param}` {pattern!r} is not a valid regular expression ({e}); "
                         "fix it in the recipe") from e


_SPACE = regex.compile(r"[ \t\n\r\f\v]")
_SPACE_BACK = regex.compile(r"[ \t\n\r\f\v]", flags=regex.REVERSE)


_START = re.Match.start


class TokenGatedSub:
    """``pattern.sub(repl, text)``, run only on the space-delimited words of ``text`` that contain
    a match of ``gate`` (or of one of several gates).

    Valid when every match of ``pattern`` contains no whitespace and contains a match of
    ``gate`` (of one of the gates; no gate match holds whitespace), and the pattern looks outside its match only for a word boundary at its start
    (a word starts after an ASCII space character or at the text start, so ``\\b`` sees the same
    there). Then the matches, and so the result, are exactly those of the plain ``sub``: the
    engine just no longer tries the full pattern at every position of every word. The built-in
    link and IP patterns qualify (see the tests).
    """

    def __init__(self, pattern: regex.Pattern, gate: str | tuple[str, ...]):
        self.pattern = pattern
        # several gates: a word is handled when it holds a match of any (a gate opening with one
        # literal character is scanned for far faster than one opening with a character class)
        self.gates = tuple(re.compile(g) for g in ((gate,) if isinstance(gate, str) else gate))
        self.gate = self.gates[0]

    def _hits(self, text: str):
        if len(self.gates) == 1:
            return self.gate.finditer(text)
        hits = [m for g in self.gates for m in g.finditer(text)]
        hits.sort(key=_START)
        return hits

    def __call__(self, repl: str, text: str) -> str:
        out, last, sub = [], 0, self.pattern.sub
        for m in self._hits(text):
            at = m.start()
            if at < last:  # inside the word just handled
                continue
            before = _SPACE_BACK.search(text, last, at)
            start = before.end() if before else last
            after = _SPACE.search(text, m.end())
            end = after.start() if after else len(text)
            out.append(text[last:start])
            out.append(sub(repl, text[start:end]))
            last = end
        if not out:
            return text
        out.append(text[last:])
        return "".join(out)
