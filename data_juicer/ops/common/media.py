"""Loading the images and videos a sample points to, as Data-Juicer 1.6.1 loads them.

A sample's media field (``image_key`` / ``video_key``) holds a list of paths (made absolute by
the loader). Each distinct path of a sample is loaded once, in order of first appearance:

- from the sample's ``__dj__context__`` dict (keyed by path), when a fused op already loaded it;
- for images, from the bytes field (``image_bytes_key``), at the position of the path's first
  occurrence, when it holds ``bytes`` there;
- else from the path.

An image is opened with Pillow, turned upright from its EXIF orientation (when opened from a
path, not from bytes), and converted to RGB. A video is opened as a PyAV container.

Kept for the ops written before ``data_juicer.media`` existed; new ops use
``data_juicer.media.image.load_row_images`` / ``data_juicer.media.audio.load_row_audios``.
"""

from __future__ import annotations

import os
from typing import Callable, Optional

from data_juicer.media.image import bytes_at as _bytes_at_impl
from data_juicer.media.image import load_image as _load_image
from data_juicer.utils.lazy import require


def load_image(path_or_bytes, who: str = ""):
    """An RGB ``PIL.Image`` from a path or from encoded bytes (``data_juicer.media.image.load_image``)."""
    return _load_image(path_or_bytes, who)


def open_video(path: str, who: str = ""):
    """A PyAV input container for ``path``."""
    av = require("av", who=who)
    if not os.path.exists(path):
        raise FileNotFoundError(f"video '{path}' does not exist")
    return av.open(path, "r")


def _bytes_at(samples: dict, bytes_key: Optional[str], row: int, pos: int):
    return _bytes_at_impl(samples, bytes_key, row, pos)


def load_row_media(samples: dict, row: int, paths: list, load: Callable, *, bytes_key: Optional[str] = None,
                   context: Optional[dict] = None, store: bool = True) -> dict:
    """``{path: loaded object}`` for the distinct ``paths`` of row ``row`` of a batch, in order.

    ``context`` is that row's context dict (or None); newly loaded objects go into it when
    ``store`` is true, so later fused ops reuse them.
    """
    out: dict = {}
    for pos, path in enumerate(paths):
        if context is not None and path in context:
            out[path] = context[path]
            continue
        if path in out:
            continue
        data = _bytes_at(samples, bytes_key, row, pos)
        obj = load(data) if data is not None else load(path)
        out[path] = obj
        if context is not None and store:
            context[path] = obj
    return out


# -- helpers the media filters and mappers share -------------------------------------------------
def check_any_or_all(any_or_all: str, who: str) -> bool:
    """True for ``any``, False for ``all``; a clear error otherwise (as Data-Juicer)."""
    if any_or_all not in ("any", "all"):
        raise ValueError(f"{who}: keep strategy [{any_or_all}] is not supported; use 'any' or 'all'")
    return any_or_all == "any"


def keep_by_strategy(flags, use_any: bool) -> bool:
    """Keep a sample from its per-media decisions: any/all of them; a sample without media is kept."""
    flags = list(flags)
    if not flags:
        return True
    return any(flags) if use_any else all(flags)


def row_source_files(samples: dict, row: int, paths: list) -> list:
    """The ``__dj__source_file__`` entry of a row whose media a mapper rewrites: the original paths.

    Data-Juicer fills it with the media paths the first time a media mapper runs; a later mapper
    keeps it (so it always names the files the sample came from).
    """
    from data_juicer.utils.constant import Fields

    col = samples.get(Fields.source_file)
    cur = col[row] if col is not None and row < len(col) else None
    return list(cur) if cur else list(paths)
