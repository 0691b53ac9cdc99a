"""Perceptual image hashes with the values of ``imagededup`` 0.3 (which Data-Juicer 1.6.1 uses).

The RGB image is resized with Pillow's Lanczos filter, then converted to 8-bit grey ("L");
the hash is 64 bits (an 8 x 8 boolean matrix, row-major, packed most significant bit first)
written as 16 hex digits:

- ``ahash``: 8 x 8 grey; each pixel >= the mean of all pixels;
- ``dhash``: 9 wide x 8 high grey; each pixel > its left neighbour;
- ``phash``: 32 x 32 grey; type-II DCT (``scipy.fftpack.dct``, unnormalised) along rows then
  columns; the top-left 8 x 8 coefficients >= the median of those 64 less the DC term;
- ``whash``: 256 x 256 grey scaled to [0, 1]; five levels of the 2-D Haar transform keep
  the 8 x 8 approximation; each coefficient >= their median.

The Haar approximation is computed here with numpy: each level adds ``c * x`` of the two
neighbours along the first axis, then along the second, with ``c = 1 / sqrt(2)`` rounded to
a double: the same operations, in the same order, as PyWavelets' ``wavedec2(.., "haar")``.
"""

from __future__ import annotations

import numpy as np

METHODS = ("phash", "dhash", "whash", "ahash")
SIZES = {"phash": (32, 32), "dhash": (9, 8), "whash": (256, 256), "ahash": (8, 8)}  # (width, height)
_HAAR = 0.7071067811865476  # PyWavelets' Haar decomposition filter taps


def _haar_approximation(x: np.ndarray, levels: int) -> np.ndarray:
    for _ in range(levels):
        x = _HAAR * x[0::2] + _HAAR * x[1::2]
        x = _HAAR * x[:, 0::2] + _HAAR * x[:, 1::2]
    return x


def hash_bits(grey: np.ndarray, method: str) -> np.ndarray:
    """The 8 x 8 boolean hash matrix of a resized grey uint8 image."""
    if method == "ahash":
        return grey >= np.mean(grey)
    if method == "dhash":
        return grey[:, 1:] > grey[:, :-1]
    if method == "phash":
        from scipy.fftpack import dct

        coef = dct(dct(grey, axis=0), axis=1)[:8, :8]
        return coef >= np.median(coef.ravel()[1:])
    if method == "whash":
        low = _haar_approximation(grey / 255, 5)
        return low >= np.median(low.ravel())
    raise ValueError(f"unknown image hash method '{method}': use one of {', '.join(METHODS)}")


def image_hash(image, method: str) -> str:
    """16-hex-digit hash of an RGB ``PIL.Image``."""
    from PIL import Image

    grey = np.asarray(image.resize(SIZES[method], Image.LANCZOS).convert("L"), dtype=np.uint8)
    return np.packbits(hash_bits(grey, method)).tobytes().hex()
