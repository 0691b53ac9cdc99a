"""Words of a text as the word-level text filters see them, and their context keys.

Splitting on space/newline/tab, lower-casing and stripping Data-Juicer's special characters
(``strip_characters.SPECIAL_CHARACTERS``) give the same words as Data-Juicer 1.6.1, so word
counts and ratios match exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from data_juicer.ops.common.strip_characters import SPECIAL_CHARACTERS
from data_juicer.utils.constant import InterVars


def split_words(text: str) -> list[str]:
    """Words of ``text`` split on space, newline and tab only (not on other whitespace); runs of
    separators give no empty words."""
    words = text.replace("\n", " ").replace("\t", " ").split(" ")
    return list(filter(None, words)) if "" in words else words


def strip_special(word: str, chars: frozenset[str] = SPECIAL_CHARACTERS) -> str:
    """``word`` without its leading and trailing characters from ``chars``."""
    if not word or (word[0] not in chars and word[-1] not in chars):
        return word
    beg, end = 0, len(word)
    while beg < end and word[beg] in chars:
        beg += 1
    while end > beg and word[end - 1] in chars:
        end -= 1
    return word[beg:end]


# the special characters below 128, as one ``str.strip`` argument: all an ASCII text can hold
_ASCII_SPECIAL = "".join(sorted(c for c in SPECIAL_CHARACTERS if ord(c) < 128))


def strip_chars_in(text: str, chars: frozenset[str] = SPECIAL_CHARACTERS) -> str:
    """The characters of ``chars`` that occur in ``text``, as one ``str.strip`` argument."""
    if chars is SPECIAL_CHARACTERS and text.isascii():
        return _ASCII_SPECIAL
    return "".join(chars.intersection(set(text)))


def refine_words(words: list[str], lower_case: bool = False,
                 strip_chars: frozenset[str] | None = SPECIAL_CHARACTERS, text: str | None = None) -> list[str]:
    """Lower-case (optionally), then strip ``strip_chars`` from both ends and drop emptied words.

    ``text``: the text the words were split from (substrings of it; not with ``lower_case``). Then
    the words are stripped with ``str.strip`` of the special characters the text holds (a handful,
    where the full set is 1,618 characters, too many for ``str.strip`` to search quickly): the
    same words, about 30 % faster."""
    if strip_chars and text is not None and not lower_case:
        chars = strip_chars_in(text, strip_chars)
        out = [w.strip(chars) for w in words] if chars else list(words)
        return list(filter(None, out)) if "" in out else out
    if lower_case:
        words = [w.lower() for w in words]
    if strip_chars:
        chars = strip_chars
        words = [s for s in (w if w[0] not in chars and w[-1] not in chars else strip_special(w, chars)
                             for w in words if w) if s]
    return words


# characters whose lower-casing moves them into or out of the special characters, and the capital
# sigma (whose lower case depends on the next letter, which may be a stripped special one such as 'π')
# (tests/ops/common/test_text_words.py recomputes this set from SPECIAL_CHARACTERS)
LOWER_UNSAFE_CHARS = "\u00d8\u03a0\u03a3\u0413\u24c2\ua7ae"
_LOWER_UNSAFE = re.compile(f"[{LOWER_UNSAFE_CHARS}]")


def lower_commutes(text: str) -> bool:
    """Whether stripping special characters and splitting commute with lower-casing for ``text``
    (it holds no character of ``LOWER_UNSAFE_CHARS``): then the lower-cased words are the words of
    ``text.lower()``. (Six ``in`` tests, each a fast C scan: ten times quicker than one regex search.)"""
    if text.isascii():
        return True
    for ch in LOWER_UNSAFE_CHARS:
        if ch in text:
            return False
    return True


def lower_stripped(text: str, stripped: list[str]) -> list[str] | None:
    """``refine_words(split_words(text), lower_case=True)`` from ``stripped`` (the same words not
    lower-cased), or None when ``text`` holds a character for which stripping and lower-casing do
    not commute (then compute it from the text). The words hold no space, so one ``lower`` of
    their space-joined string does it."""
    if _LOWER_UNSAFE.search(text) is not None:
        return None
    return " ".join(stripped).lower().split(" ") if stripped else []


def lower_refined_words(text: str) -> list[str] | None:
    """``refine_words(split_words(text), lower_case=True)`` by lower-casing the whole text first,
    or None when ``text`` holds a character of ``LOWER_UNSAFE_CHARS`` (then compute it per word).
    Without those, lower-casing maps every special character (the separators among them) to itself
    and every other character to non-special ones, with no dependence on the neighbours: the words
    of the lower-cased text are the lower-cased words, and stripping commutes with lower-casing.
    One ``str.lower`` of the text, then the fast ``str.strip`` of ``refine_words(..., text=...)``."""
    if _LOWER_UNSAFE.search(text) is not None:
        return None
    low = text.lower()
    return refine_words(split_words(low), text=low)


def stripped_words_context_key(model_key: str | None, text_key: str) -> str:
    """``__dj__context__`` key of the special-stripped words, not lower-cased."""
    return f"{InterVars.refined_words}-{model_key}-{text_key}-False-SPECIAL_CHARS-False-[2]-"


def words_context_key(model_key: str | None, text_key: str) -> str:
    """``__dj__context__`` key of the word list of ``text_key`` split by ``model_key`` (None: plain split)."""
    return f"{InterVars.words}-{model_key}-{text_key}"


def refined_words_context_key(model_key: str | None, text_key: str, use_words_aug: bool = False,
                              words_aug_group_sizes: Sequence[int] = (2,), words_aug_join_char: str = "") -> str:
    """``__dj__context__`` key of the lower-cased, special-stripped words (Data-Juicer's key layout)."""
    return (f"{InterVars.refined_words}-{model_key}-{text_key}-True-SPECIAL_CHARS-"
            f"{use_words_aug}-{list(words_aug_group_sizes)}-{words_aug_join_char}")


def batch_words(texts: list[str], indices: Sequence[int], contexts: list[dict] | None, key: str,
                tokenize: Callable[[list[str]], list[list[str]]] | None = None) -> list[list[str]]:
    """Words of ``texts[i]`` for each ``i`` in ``indices``.

    With ``contexts`` (the batch's ``__dj__context__`` dicts) a word list already stored under
    ``key`` is reused and a new one is stored there. ``tokenize`` maps a list of texts to their
    token lists in one call; without it words are split on space, newline and tab.
    """
    out: list = [None] * len(indices)
    missing = []
    for j, i in enumerate(indices):
        words = contexts[i].get(key) if contexts is not None else None
        if words is None:
            missing.append(j)
        else:
            out[j] = words
    if missing:
        todo = [texts[indices[j]] for j in missing]
        computed = tokenize(todo) if tokenize is not None else [split_words(t) for t in todo]
        for j, words in zip(missing, computed):
            out[j] = words
            if contexts is not None:
                contexts[indices[j]][key] = words
    return out


def setup_word_tokenizer(op, lang: str, tokenization: bool) -> None:
    """Store ``lang``/``tokenization`` on a word-level op and, when tokenizing, check that
    sentencepiece and the ``<lang>.sp.model`` file are there (``op.model_key`` names the split)."""
    from data_juicer.models.loader import check_sentencepiece

    op.lang = lang
    op.tokenization = tokenization
    op.model_key = None
    if tokenization:
        op.requires = ("sentencepiece",)
        op.model_key = check_sentencepiece(lang, who=op.name)


def sentencepiece_words(op):
    """The op's sentencepiece tokenizer (loaded once per process), or None for the plain split."""
    from data_juicer.models.loader import sentencepiece_tokenizer

    return sentencepiece_tokenizer(op.lang, who=op.name) if op.tokenization else None


def text_lines(text: str, context: dict | None, key: str) -> list[str]:
    """``text.splitlines()``, shared through a sample's ``__dj__context__`` dict when given."""
    if context is None:
        return text.splitlines()
    lines = context.get(key)
    if lines is None:
        lines = context[key] = text.splitlines()
    return lines
