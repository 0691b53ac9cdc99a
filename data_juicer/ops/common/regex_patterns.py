"""Compiling user-given regular expressions for the text-cleaning mappers.

Recipes written for Data-Juicer may quote a pattern as a Python raw-string literal
(``"r'\\d+'"``); the quotes and the ``r`` are dropped so such recipes keep working.
Patterns use the ``regex`` package (``\\p{Han}``, Unicode-aware ``\\w``/``\\b``) with DOTALL.
"""

from __future__ import annotations

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
