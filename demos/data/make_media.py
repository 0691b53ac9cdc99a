"""Regenerates the small media files the demo recipes use (run from the repo root):

    python demos/data/make_media.py

Images are drawn with numpy + Pillow and audio is synthesised with numpy (stdlib ``wave``): both
are byte-for-byte deterministic. Videos are ffmpeg test patterns (``testsrc``), encoded with
MPEG-4 part 2 at a fixed bit rate; their bytes may differ across ffmpeg versions, their duration
and size do not. The jsonl files beside them name the files by paths relative to their folder.
"""
import os
import subprocess
import wave

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def images(out):
    os.makedirs(out, exist_ok=True)
    y, x = np.mgrid[0:96, 0:128]
    sky = np.stack([x * 2 % 256, 120 + y // 2, 255 - y * 2], -1).astype(np.uint8)
    Image.fromarray(sky).save(os.path.join(out, "gradient.png"))                      # 128x96
    Image.fromarray(sky).save(os.path.join(out, "gradient_copy.png"))                 # a byte copy
    y, x = np.mgrid[0:80, 0:80]
    checker = (((x // 10 + y // 10) % 2) * 200 + 30).astype(np.uint8)
    Image.fromarray(np.stack([checker, checker // 2, 255 - checker], -1)).save(os.path.join(out, "checker.png"))
    y, x = np.mgrid[0:40, 0:240]
    banner = np.stack([(x + y) % 256, np.full_like(x, 90), (x * 3) % 256], -1).astype(np.uint8)
    Image.fromarray(banner).save(os.path.join(out, "banner.png"))                     # 240x40: too wide
    y, x = np.mgrid[0:16, 0:16]
    Image.fromarray(np.stack([x * 16, y * 16, (x + y) * 8], -1).astype(np.uint8)).save(
        os.path.join(out, "icon.png"))                                                # 16x16: too small
    rng = np.random.default_rng(0)
    photo = (rng.random((72, 96, 3)) * 60 + np.linspace(60, 190, 96)[None, :, None]).astype(np.uint8)
    Image.fromarray(photo).save(os.path.join(out, "noise.jpg"), quality=85)          # 96x72 JPEG


def audio(out, rate=8000):
    os.makedirs(out, exist_ok=True)
    for name, seconds, hz in [("beep_short.wav", 0.5, 880), ("tone_1500ms.wav", 1.5, 440), ("chirp_3s.wav", 3.0, 0)]:
        t = np.arange(int(rate * seconds)) / rate
        wav = np.sin(2 * np.pi * (hz * t if hz else 200 * t + 100 * t * t)) * 0.4
        with wave.open(os.path.join(out, name), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes((wav * 32767).astype("<i2").tobytes())


def videos(out):
    os.makedirs(out, exist_ok=True)
    for name, seconds, size in [("pattern_3s.mp4", 3, "160x120"), ("pattern_1s.mp4", 1, "120x160")]:
        subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i",
                        f"testsrc=duration={seconds}:size={size}:rate=10", "-c:v", "mpeg4", "-b:v", "120k",
                        "-pix_fmt", "yuv420p", "-map_metadata", "-1", "-fflags", "+bitexact",
                        os.path.join(out, name)], check=True)


if __name__ == "__main__":
    images(os.path.join(HERE, "images"))
    audio(os.path.join(HERE, "audio"))
    videos(os.path.join(HERE, "videos"))
