"""Shingles of a text for near-duplicate detection, as Data-Juicer's MinHash/SimHash dedups cut them.

A shingle is a run of ``window`` consecutive tokens, joined and UTF-8 encoded: words split on
spaces, or pieces between Unicode punctuation (``\\p{P}``), joined by one space; sentencepiece
pieces joined with nothing; or ``window`` consecutive characters. A text with fewer than
``window`` tokens has no shingles.

Shingles are cut as slices of the one encoded text rather than joined token by token.
"""

from __future__ import annotations

import numpy as np
import regex

TOKENIZATIONS = ("space", "punctuation", "character", "sentencepiece")

PUNCTUATION = regex.compile(r"\p{P}")


def space_tokens(text: str) -> list[str]:
    """Words split on the space character only; runs of spaces give no empty words."""
    return [w for w in text.split(" ") if w]


def punctuation_tokens(text: str) -> list[str]:
    """Pieces between Unicode punctuation characters, empty pieces included."""
    return PUNCTUATION.split(text)


def joined_shingles(tokens: list[str], sep: str, window: int) -> list[bytes]:
    """``sep.join(tokens[i:i + window]).encode()`` for each start ``i``."""
    count = len(tokens) - window + 1
    if count <= 0:
        return []
    if window == 1:
        return [t.encode() for t in tokens]
    joined = sep.join(tokens)
    buf = joined.encode()
    lens = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    ends = np.cumsum(lens + len(sep)) - len(sep)  # character offsets in ``joined``
    starts = ends - lens
    if len(buf) != len(joined):  # not ASCII: character offsets to byte offsets
        at = _byte_offsets(joined)
        starts, ends = at[starts], at[ends]
    return [buf[a:b] for a, b in zip(starts[:count].tolist(), ends[window - 1:].tolist())]


def _byte_offsets(text: str) -> np.ndarray:
    """UTF-8 byte offset of each character of ``text``, and of its end."""
    cps = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
    sizes = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    return np.concatenate(([0], np.cumsum(sizes)))


def char_shingles(text: str, window: int) -> list[bytes]:
    """``text[i:i + window].encode()`` for each start ``i``."""
    count = len(text) - window + 1
    if count <= 0:
        return []
    buf = text.encode()
    if len(buf) == len(text):
        return [buf[i:i + window] for i in range(count)]
    offsets = _byte_offsets(text).tolist()
    return [buf[a:b] for a, b in zip(offsets[:count], offsets[window:])]


def shingles(text_or_pieces, tokenization: str, window: int) -> list[bytes]:
    """Shingles of a text (or, for ``sentencepiece``, of its pieces), in order, repeats included."""
    if tokenization == "space":
        return joined_shingles(space_tokens(text_or_pieces), " ", window)
    if tokenization == "punctuation":
        return joined_shingles(punctuation_tokens(text_or_pieces), " ", window)
    if tokenization == "character":
        return char_shingles(text_or_pieces, window)
    if tokenization == "sentencepiece":
        return joined_shingles(text_or_pieces, "", window)
    raise ValueError(f"unknown tokenization '{tokenization}': use one of {', '.join(TOKENIZATIONS)}")
