"""Shared bits of the tests of the non-transformers model ops: test images/videos, dry-run checks."""

from __future__ import annotations

import os

import numpy as np
import pytest


def write_image(path: str, w: int, h: int, seed: int = 0) -> str:
    from PIL import Image

    os.makedirs(os.path.dirname(path), exist_ok=True)
    arr = (np.random.RandomState(seed).rand(h, w, 3) * 255).astype("uint8")
    Image.fromarray(arr).save(path)
    return path


def write_video(path: str, frames: int = 8, w: int = 64, h: int = 48, fps: int = 4, moving: bool = True) -> str:
    """A small mp4 (ffmpeg-free: PyAV) of a bright square moving right ``moving`` px/frame."""
    import av

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with av.open(path, "w") as out:
        st = out.add_stream("mpeg4", rate=fps)
        st.width, st.height, st.pix_fmt = w, h, "yuv420p"
        for t in range(frames):
            img = np.full((h, w, 3), 40, dtype=np.uint8)
            x = 8 + (4 * t if moving else 0)
            img[h // 3:h // 3 + 16, x:x + 16] = 220
            for pkt in st.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(pkt)
        for pkt in st.encode():
            out.mux(pkt)
    return path


# ``dj-process --dry_run`` validates names/params but does not build the ops yet, so it cannot see a
# missing model; strict: once the CLI builds ops under --dry_run these tests pass and the mark goes


def dry_run(make_recipe, process, rows=None, capsys=None) -> tuple[int, str]:
    """``dj-process --config <recipe> --dry_run``: (exit code, stderr+stdout)."""
    from data_juicer.cli.process import main

    recipe = make_recipe(rows=rows or [{"text": "x"}], process=process)
    rc = main(["--config", recipe, "--dry_run"])
    out = ""
    if capsys is not None:
        cap = capsys.readouterr()
        out = cap.out + cap.err
    return rc, out
