"""Videos of real faces for the dlib face op, made with ffmpeg from scikit-image's photos.

``make_face_videos(folder, skimage_dir)`` writes (once) and returns ``{name: path}``:

================  ====================================================================
``face``          ``astronaut.png`` (a frontal face, 87x87 px box), 512x512, 10 fps, 1 s
``mixed``         0.6 s of ``astronaut.png`` then 0.4 s of ``coffee.png`` (no face), 512x512,
                  10 fps: faces in frames 1-6 of 10
``small_face``    ``astronaut.png`` scaled to 256x256 (face below dlib's 80 px window), 1 s
``no_face``       ``coffee.png`` 512x512, 10 fps, 0.5 s
``portrait``      the top-left 400x300 of ``astronaut.png`` (the face, not the suit's patch), 1 s
================  ====================================================================

All H.264 yuv420p at CRF 12 (nearly lossless, so each frame is detected as the photo is).
"""

from __future__ import annotations

import os
import subprocess


def _x264() -> list[str]:
    return ["-c:v", "libx264", "-preset", "veryfast", "-crf", "12", "-pix_fmt", "yuv420p", "-g", "5"]


def _still(img: str, secs: float) -> list[str]:
    return ["-loop", "1", "-framerate", "10", "-t", str(secs), "-i", img]


def make_face_videos(folder, skimage_dir) -> dict[str, str]:
    folder, sk = str(folder), str(skimage_dir)
    os.makedirs(folder, exist_ok=True)
    astro, coffee = os.path.join(sk, "astronaut.png"), os.path.join(sk, "coffee.png")
    scale = "scale=512:512,setsar=1,fps=10,format=yuv420p"
    recipes = {
        "face": [*_still(astro, 1), "-vf", scale, "-frames:v", "10"],
        "mixed": [*_still(astro, 0.6), *_still(coffee, 0.4), "-filter_complex",
                  f"[0]{scale}[a];[1]{scale}[b];[a][b]concat=n=2:v=1:a=0[v]", "-map", "[v]", "-frames:v", "10"],
        "small_face": [*_still(astro, 1), "-vf", "scale=256:256,setsar=1,fps=10,format=yuv420p", "-frames:v", "10"],
        "no_face": [*_still(coffee, 0.5), "-vf", scale, "-frames:v", "5"],
        "portrait": [*_still(astro, 1), "-vf", "crop=400:300:0:0,setsar=1,fps=10,format=yuv420p", "-frames:v", "10"],
    }
    out = {}
    for name, args in recipes.items():
        path = os.path.join(folder, f"{name}.mp4")
        if not os.path.exists(path):
            tmp = os.path.join(folder, f".{name}.tmp.mp4")
            subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", *args, *_x264(), tmp],
                           check=True, capture_output=True)
            os.replace(tmp, path)
        out[name] = path
    return out
