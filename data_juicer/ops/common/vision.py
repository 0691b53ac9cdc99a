"""What the model-backed image/video ops share: loading a row's media, pairing text chunks with
their images, reducing scores, and Data-Juicer's 'any'/'all' keep rule.

Loading goes through the media layer (``data_juicer.media``) when it is there, else through
``ops/common/media.py``; either way a row's ``__dj__context__`` dict caches what a fused pass
already loaded.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from data_juicer.ops.common.special_tokens import remove_special_tokens, special_tokens
from data_juicer.utils.constant import Fields

REDUCE_MODES = ("avg", "max", "min")
ANY_OR_ALL = ("any", "all")
FRAME_SAMPLING = ("all_keyframes", "uniform")


def check_choice(value, allowed: Sequence[str], what: str, who: str) -> None:
    """A ValueError naming the op, the parameter and the allowed values (as Data-Juicer checks them)."""
    if value not in allowed:
        raise ValueError(f"{who}: {what} [{value}] is not supported. Can only be one of {list(allowed)}.")


def row_context(samples: dict, i: int):
    ctx = samples.get(Fields.context)
    return ctx[i] if ctx is not None else None


def load_images(op, samples: dict, i: int) -> dict:
    """``{path: RGB PIL image}`` for the distinct images of row ``i`` (honouring ``image_bytes_key``)."""
    try:
        from data_juicer.media.image import load_row_images
    except ImportError:
        load_row_images = None
    ctx = row_context(samples, i)
    if load_row_images is not None:
        return load_row_images(op, samples, i, ctx)
    from data_juicer.ops.common.media import load_image, load_row_media

    who = op.name
    return load_row_media(samples, i, samples[op.image_key][i], lambda p: load_image(p, who),
                          bytes_key=op.image_bytes_key, context=ctx)


def load_image_file(path: str, who: str = ""):
    """One RGB image from a path (frames kept as files, ``frame_field``)."""
    try:
        from data_juicer.media.image import load_image
    except ImportError:
        from data_juicer.ops.common.media import load_image as _load

        return _load(path, who)
    return load_image(path)


def flip(image, horizontal: bool, vertical: bool):
    """The image mirrored left-right and/or top-bottom (as Data-Juicer's ``ImageOps.mirror`` / ``flip``)."""
    if not (horizontal or vertical):
        return image
    from PIL import ImageOps

    if horizontal:
        image = ImageOps.mirror(image)
    if vertical:
        image = ImageOps.flip(image)
    return image


def text_media_chunks(text: str, paths: Sequence[str], token: str) -> list[tuple[str, list[str]]]:
    """``[(chunk text without special tokens, [the media paths of that chunk])]`` for the chunks
    of ``text`` (split at the end-of-chunk token) that hold at least one ``token``.

    The k-th ``token`` of the text is the k-th path, as Data-Juicer pairs them.
    """
    eoc = special_tokens()["eoc"]
    out, offset = [], 0
    for chunk in text.split(eoc):
        count = chunk.count(token)
        if count == 0 or not chunk:
            continue
        out.append((remove_special_tokens(chunk), list(paths[offset:offset + count])))
        offset += count
    return out


def reduce_scores(values: Sequence[float], mode: str) -> float:
    """avg / max / min of ``values`` (the mean in float64, as numpy's)."""
    if mode == "max":
        return float(max(values))
    if mode == "min":
        return float(min(values))
    import numpy as np

    return float(np.mean(np.asarray(values, dtype=np.float64)))


def keep_by(op, values: Iterable[float], min_val, max_val, any_: bool) -> bool:
    """Keep a sample with no values; else when any / all of them are inside [min_val, max_val]."""
    flags = [op.get_keep_boolean(v, min_val, max_val) for v in values]
    if not flags:
        return True
    return any(flags) if any_ else all(flags)


def split_by_counts(flat: Sequence, counts: Sequence[int]) -> list[list]:
    """``flat`` cut into consecutive lists of the given lengths."""
    out, pos = [], 0
    for n in counts:
        out.append(list(flat[pos:pos + n]))
        pos += n
    return out


class ModelChecks:
    """Mixin: ``check_models(params)`` resolves the models a recipe entry names without building
    the op (for ``--dry_run`` / ``dj-install``); a missing one raises FileNotFoundError naming
    every path looked at. ``model_params`` maps each model parameter to its default model."""

    model_params: dict = {}

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        from data_juicer.models.vision import check_vision_model

        who = getattr(cls, "_name", "") or cls.__name__
        return [check_vision_model(params.get(p) or default, who=who) for p, default in cls.model_params.items()]
