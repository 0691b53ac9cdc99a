"""The multimodal special tokens and how a text's chunks pair with its media (Data-Juicer's convention).

A text carries one token per media item (``<__dj__image>``, ``<__dj__audio>``, ``<__dj__video>``)
in the order of the sample's media list, and ``<|__dj__eoc|>`` closes a chunk. Each token may be
overridden with an environment variable ``_DJ_SPECIAL_TOKEN_<NAME>`` (``IMAGE``, ``AUDIO``,
``VIDEO``, ``EOC``), as in Data-Juicer.

Data-Juicer's image-text ops walk the chunks (``text.split(eoc)``) with a running offset into
the media list: a chunk with ``n`` tokens of a kind owns the next ``n`` media; a chunk without
any (or an empty one) is skipped. ``pair_chunks_with_media`` gives exactly those pairs.
"""

from __future__ import annotations

import os

from data_juicer.utils.constant import DEFAULT_SPECIAL_TOKENS

SPECIAL_TOKEN_ENV_PREFIX = "_DJ_SPECIAL_TOKEN_"

__all__ = ["special_tokens", "special_token", "remove_special_tokens", "split_chunks", "count_media_tokens",
           "pair_chunks_with_media"]


def special_tokens() -> dict[str, str]:
    """name -> token, in Data-Juicer's order (image, audio, video, eoc), environment overrides applied."""
    return {name: os.environ.get(SPECIAL_TOKEN_ENV_PREFIX + name.upper(), tok)
            for name, tok in DEFAULT_SPECIAL_TOKENS.items()}


def special_token(name: str) -> str:
    """The token of one kind: ``image``, ``audio``, ``video`` or ``eoc``."""
    toks = special_tokens()
    if name not in toks:
        raise ValueError(f"unknown special token '{name}'; use one of {', '.join(toks)}")
    return toks[name]


def remove_special_tokens(text: str) -> str:
    """``text`` without any special token, stripped (as Data-Juicer's ``remove_special_tokens``)."""
    for tok in special_tokens().values():
        if tok in text:
            text = text.replace(tok, "")
    return text.strip()


def split_chunks(text: str, eoc_token: str | None = None) -> list[str]:
    """The chunks of ``text`` split at the end-of-chunk token (``str.split``: a trailing token gives a last '')."""
    return text.split(eoc_token or special_token("eoc"))


def count_media_tokens(chunk: str, token: str) -> int:
    """How many media tokens ``token`` the chunk holds."""
    return chunk.count(token)


def pair_chunks_with_media(text: str, media_paths: list, token: str | None = None,
                           eoc: str | None = None) -> list[tuple[str, list]]:
    """``[(chunk text without special tokens, [its media paths])]`` for the chunks that hold media.

    ``token`` defaults to the image token. Media are taken in order: a chunk with ``n`` tokens gets
    the next ``n`` paths (fewer when the list runs out, as slicing does in Data-Juicer).
    """
    token = token or special_token("image")
    out = []
    offset = 0
    for chunk in split_chunks(text, eoc):
        count = count_media_tokens(chunk, token)
        if count == 0 or len(chunk) == 0:
            continue
        out.append((remove_special_tokens(chunk), list(media_paths[offset:offset + count])))
        offset += count
    return out
