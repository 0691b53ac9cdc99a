"""Images: decoded once per sample, as Data-Juicer 1.6.1 decodes them.

``load_image`` gives an RGB ``PIL.Image``: from a path it is turned upright from its EXIF
orientation (as Hugging Face ``datasets.Image`` does for Data-Juicer); from encoded bytes it is
not (Data-Juicer opens bytes with Pillow directly). The file is read through a handle that is
closed before returning, so no descriptor stays open (also for multi-frame GIF/TIFF, where
Pillow would keep it).

``load_row_images`` loads the distinct images of one row of a batch, reusing the ones the row's
``__dj__context__`` dict already holds (a fused pass: the first op decodes, the others reuse)
and reading ``image_bytes`` where a row carries them. ``row_gray`` does the same for the grey
(OpenCV ``uint8``) version of an image, which the subplot and face ops share.
"""

from __future__ import annotations

import io
import os
from typing import Optional

from data_juicer.media.errors import MediaError, missing_file
from data_juicer.utils.constant import Fields
from data_juicer.utils.lazy import require

__all__ = ["load_image", "load_row_images", "row_context", "pil_to_bgr", "bgr_to_pil", "bytes_at", "to_gray",
           "row_gray", "opencv"]


def load_image(path_or_bytes, who: str = ""):
    """An RGB ``PIL.Image.Image`` from a path (EXIF-upright) or from encoded bytes.

    A missing path is a ``FileNotFoundError``; an undecodable file a ``MediaError``; both name it.
    """
    require("pillow", who=who)
    from PIL import Image, ImageOps

    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        try:
            img = Image.open(io.BytesIO(bytes(path_or_bytes)))
            return img.convert("RGB")
        except Exception as e:  # PIL raises UnidentifiedImageError, OSError, SyntaxError...
            raise MediaError("image", f"<{len(path_or_bytes)} bytes>", e) from e
    path = os.fspath(path_or_bytes)
    if not os.path.isfile(path):
        raise missing_file("image", path)
    try:
        with open(path, "rb") as f:
            img = Image.open(f)
            img.load()
            if img.getexif().get(0x0112) is not None:  # EXIF Orientation
                img = ImageOps.exif_transpose(img)
            return img.convert("RGB")
    except PermissionError:
        raise
    except Exception as e:
        raise MediaError("image", path, e) from e


def row_context(samples: dict, row: int, context: Optional[dict] = None) -> Optional[dict]:
    """The ``__dj__context__`` dict of row ``row`` (``context`` if given), or None outside a fused pass."""
    if context is not None:
        return context
    ctx = samples.get(Fields.context)
    if ctx is None or row >= len(ctx) or not isinstance(ctx[row], dict):
        return None
    return ctx[row]


def bytes_at(samples: dict, bytes_key: Optional[str], row: int, pos: int):
    """The encoded bytes at position ``pos`` of row ``row``'s bytes field, or None (as Data-Juicer)."""
    if not bytes_key or bytes_key not in samples:
        return None
    per_row = samples[bytes_key][row]
    if not isinstance(per_row, list) or pos >= len(per_row):
        return None
    data = per_row[pos]
    return data if isinstance(data, (bytes, bytearray)) else None


def load_row_images(op, samples: dict, row: int, context: Optional[dict] = None,
                    paths: Optional[list] = None) -> dict:
    """``{path: PIL image}`` for the distinct images of row ``row``, in order of first appearance.

    ``paths`` defaults to ``samples[op.image_key][row]``. Each path is taken, in order, from the
    row's context dict (keyed by path), else from ``op.image_bytes_key`` at the position of the
    path's first occurrence, else from the file; newly decoded images go into the context.
    """
    if paths is None:
        paths = samples[op.image_key][row] or []
    ctx = row_context(samples, row, context)
    who = getattr(op, "name", "")
    out: dict = {}
    for pos, path in enumerate(paths):
        if path in out:
            continue
        if ctx is not None and path in ctx:
            out[path] = ctx[path]
            continue
        data = bytes_at(samples, getattr(op, "image_bytes_key", None), row, pos)
        img = load_image(data if data is not None else path, who)
        out[path] = img
        if ctx is not None:
            ctx[path] = img
    return out


def pil_to_bgr(img):
    """A contiguous ``uint8`` HxWx3 BGR array (OpenCV's layout) of a PIL image (made RGB first)."""
    import numpy as np

    if img.mode != "RGB":
        img = img.convert("RGB")
    return np.ascontiguousarray(np.asarray(img)[:, :, ::-1])


def bgr_to_pil(arr):
    """A PIL RGB image from an HxWx3 BGR array (or an HxW grey one)."""
    import numpy as np
    from PIL import Image

    if arr.ndim == 2:
        return Image.fromarray(np.ascontiguousarray(arr)).convert("RGB")
    return Image.fromarray(np.ascontiguousarray(arr[:, :, ::-1]))


_OPENCV_PID = None  # the process whose OpenCV thread count ``opencv`` has settled


def opencv():
    """``cv2``, with OpenCV's own thread pool set to one thread in a worker of a process pool.

    The ``np`` workers of a pass already fill the cores; each worker's default OpenCV pool (one
    thread per core, busy-waiting between the strips of ``detectMultiScale``, ``Canny``...) only
    oversubscribes them: 4 threads on 2 cores at ``np: 2``. Outside a pool (``np: 1``, the driver)
    OpenCV keeps its default. The results do not depend on it (the same pixels, the same faces).
    ``DJ_OPENCV_POOL_THREADS`` sets the count for pool workers instead (``0``: OpenCV's default)."""
    global _OPENCV_PID
    import cv2

    pid = os.getpid()
    if _OPENCV_PID != pid:
        _OPENCV_PID = pid
        import multiprocessing

        if multiprocessing.parent_process() is not None:
            try:
                n = int(os.environ.get("DJ_OPENCV_POOL_THREADS", "1"))
            except ValueError:
                n = 1
            if n > 0:
                cv2.setNumThreads(n)
    return cv2


def to_gray(img):
    """The ``uint8`` HxW grey image OpenCV makes of a PIL image (made RGB first).

    ``cv2.cvtColor(rgb, COLOR_RGB2GRAY)`` on the RGB array: the very pixels of
    ``cvtColor(pil_to_bgr(img), COLOR_BGR2GRAY)``, Data-Juicer's way (the same weights on the same
    channels, checked pixel for pixel in the tests), without the flipped copy."""
    import numpy as np

    cv2 = opencv()

    if img.mode != "RGB":
        img = img.convert("RGB")
    return cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2GRAY)


_GRAY = "__dj__gray__"  # context key of a row's {path: grey array}: not a str, so never a media path


def row_gray(samples: dict, row: int, path, img, context: Optional[dict] = None):
    """``to_gray(img)`` for image ``path`` of row ``row``, computed once per row and pass: kept in the
    row's context (when there is one) for the other ops of the pass."""
    ctx = row_context(samples, row, context)
    if ctx is None:
        return to_gray(img)
    grays = ctx.setdefault((_GRAY,), {})
    gray = grays.get(path)
    if gray is None:
        gray = grays[path] = to_gray(img)
    return gray
