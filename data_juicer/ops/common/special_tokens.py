"""The multimodal special tokens (``<__dj__image>``...) as ops see them, and their removal.

The tokens default to ``DEFAULT_SPECIAL_TOKENS``; like Data-Juicer, each may be overridden by an
environment variable ``_DJ_SPECIAL_TOKEN_<NAME>`` (``IMAGE``, ``AUDIO``, ``VIDEO``, ``EOC``).
"""

import os

from data_juicer.utils.constant import DEFAULT_SPECIAL_TOKENS

SPECIAL_TOKEN_ENV_PREFIX = "_DJ_SPECIAL_TOKEN_"


def special_tokens() -> dict[str, str]:
    """name -> token, in Data-Juicer's order (image, audio, video, eoc)."""
    return {name: os.environ.get(SPECIAL_TOKEN_ENV_PREFIX + name.upper(), tok)
            for name, tok in DEFAULT_SPECIAL_TOKENS.items()}


def remove_special_tokens(text: str) -> str:
    """``text`` without the special tokens (removed one kind after the other), stripped."""
    for tok in special_tokens().values():
        if tok in text:
            text = text.replace(tok, "")
    return text.strip()
