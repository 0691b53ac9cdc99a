"""What the non-transformers model ops (Ultralytics, torchvision RAFT, rembg, EasyOCR, diffusers,
plug-in models) share: a row's images through the media layer, the device to run on, and the
``__dj__meta__`` dict of a row.
"""

from __future__ import annotations

import os
from pathlib import Path

from data_juicer.utils.constant import Fields

# Data-Juicer's DATA_JUICER_ASSETS_CACHE, the default folder of the files some ops write
ASSETS_CACHE = Path(os.path.expanduser(os.environ.get("DATA_JUICER_ASSETS_CACHE") or os.path.join(
    os.environ.get("DATA_JUICER_CACHE_HOME") or os.path.join("~", ".cache", "data_juicer"), "assets")))


def row_images(op, samples: dict, i: int) -> dict:
    """``{path: RGB PIL image}`` for the distinct images of row ``i`` (honouring ``image_bytes_key``
    and the row's ``__dj__context__`` cache)."""
    ctx = samples.get(Fields.context)
    ctx = ctx[i] if ctx is not None else None
    try:
        from data_juicer.media.image import load_row_images
    except ImportError:  # media layer not there: the older helper of the dedup ops
        from data_juicer.ops.common.media import load_image, load_row_media

        return load_row_media(samples, i, samples[op.image_key][i], lambda p: load_image(p, op.name),
                              bytes_key=op.image_bytes_key, context=ctx)
    return load_row_images(op, samples, i, ctx)


def device_for(op) -> str:
    """``cuda`` when the op's accelerator asks for it and a GPU is there, else ``cpu``."""
    from data_juicer.models.hf import pick_device

    return pick_device(op.accelerator)


def row_metas(samples: dict, n: int) -> list[dict]:
    """A fresh ``__dj__meta__`` dict per row (a copy of the one there), set into ``samples``."""
    metas = samples.get(Fields.meta) or [None] * n
    metas = [dict(m) if m else {} for m in metas]
    samples[Fields.meta] = metas
    return metas


def num_rows(samples: dict) -> int:
    return len(next(iter(samples.values()))) if samples else 0
