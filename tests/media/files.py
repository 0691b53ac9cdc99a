"""Small test images and audios made at test time (session-scoped; a few KB each).

Import the fixture into a test module (``from tests.media.files import media_files  # noqa: F401``)
and index it by name, or call ``make_media_files(folder)`` directly. Every path is absolute.

Images (drawn with Pillow):

=================  ========================================================================
``rgb``            64x48 RGB JPEG: a red rectangle and a blue ellipse on white
``png``            the same drawing as a 64x48 PNG (lossless: exact pixels)
``gray``           32x32 grayscale (``L``) PNG, a horizontal ramp
``rgba``           40x20 RGBA PNG, half transparent
``cmyk``           30x30 CMYK JPEG
``palette``        24x16 palette (``P``) GIF
``exif_rotated``   stored 40x20, EXIF orientation 6 (rotate 90): upright it is 20x40
``one_px``         1x1 PNG
``wide``           400x10 PNG (aspect 40)
``tall``           10x400 PNG (aspect 0.025)
``grid``           400x300 PNG: a 3x3 grid of black lines (a "subplot" figure)
``corrupt_image``  random bytes named .jpg
``truncated_image`` the first half of ``rgb`` (the decoder runs out of data)
``missing_image``  a path that does not exist
=================  ========================================================================

Audios (numpy tones written with soundfile; ffmpeg/espeak-ng where noted):

=================  ========================================================================
``tone16k``        1.0 s 440 Hz sine, 16 kHz mono PCM16 WAV, amplitude 0.5
``tone44k_stereo`` 0.5 s stereo 44.1 kHz PCM16 WAV (440 Hz left, 880 Hz right)
``tone8k_flac``    2.0 s 300 Hz sine, 8 kHz FLAC
``tone_mp3``       ``tone16k`` encoded to MP3 by ffmpeg (lossy: decoded by FFmpeg)
``noisy``          1.0 s 440 Hz sine + seeded white noise, 16 kHz
``silent``         1.0 s of zeros, 16 kHz
``zero_length``    a WAV with no samples
``speech``         espeak-ng saying a sentence (22.05 kHz mono WAV)
``corrupt_audio``  random bytes named .wav
``truncated_audio`` a WAV header promising 1 s with 10 ms of data behind it (decodes to 160 samples)
``missing_audio``  a path that does not exist
=================  ========================================================================
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import wave

import pytest

IMAGE_NAMES = ("rgb", "png", "gray", "rgba", "cmyk", "palette", "exif_rotated", "one_px", "wide", "tall", "grid",
               "corrupt_image", "truncated_image", "missing_image")
AUDIO_NAMES = ("tone16k", "tone44k_stereo", "tone8k_flac", "tone_mp3", "noisy", "silent", "zero_length", "speech",
               "corrupt_audio", "truncated_audio", "missing_audio")


def _drawing(size=(64, 48)):
    from PIL import Image, ImageDraw

    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    d.rectangle([4, 4, 28, 40], fill=(220, 20, 20))
    d.ellipse([32, 8, 60, 40], fill=(20, 20, 220))
    return img


def _make_images(folder: str) -> dict[str, str]:
    from PIL import Image, ImageDraw

    p = {n: os.path.join(folder, f) for n, f in [
        ("rgb", "rgb.jpg"), ("png", "drawing.png"), ("gray", "gray.png"), ("rgba", "rgba.png"), ("cmyk", "cmyk.jpg"),
        ("palette", "palette.gif"), ("exif_rotated", "exif_rotated.jpg"), ("one_px", "one_px.png"),
        ("wide", "wide.png"), ("tall", "tall.png"), ("grid", "grid.png"), ("corrupt_image", "corrupt.jpg"),
        ("truncated_image", "truncated.jpg"), ("missing_image", "missing.jpg")]}
    _drawing().save(p["rgb"], quality=90)
    _drawing().save(p["png"])
    Image.frombytes("L", (32, 32), bytes(x * 8 for _ in range(32) for x in range(32))).save(p["gray"])
    rgba = Image.new("RGBA", (40, 20), (0, 128, 0, 255))
    ImageDraw.Draw(rgba).rectangle([20, 0, 39, 19], fill=(0, 0, 255, 100))
    rgba.save(p["rgba"])
    Image.new("CMYK", (30, 30), (0, 255, 255, 0)).save(p["cmyk"])
    _drawing((24, 16)).quantize(colors=4).save(p["palette"])
    rot = Image.new("RGB", (40, 20), "white")
    ImageDraw.Draw(rot).rectangle([0, 0, 9, 19], fill="black")
    exif = Image.Exif()
    exif[0x0112] = 6
    rot.save(p["exif_rotated"], exif=exif.tobytes(), quality=95)
    Image.new("RGB", (1, 1), (10, 20, 30)).save(p["one_px"])
    Image.new("RGB", (400, 10), "gray").save(p["wide"])
    Image.new("RGB", (10, 400), "gray").save(p["tall"])
    grid = Image.new("RGB", (400, 300), "white")
    d = ImageDraw.Draw(grid)
    for x in (10, 136, 263, 389):
        d.line([x, 10, x, 289], fill="black", width=3)
    for y in (10, 103, 196, 289):
        d.line([10, y, 389, y], fill="black", width=3)
    grid.save(p["grid"])
    rnd = random.Random(0)
    with open(p["corrupt_image"], "wb") as f:
        f.write(bytes(rnd.randrange(256) for _ in range(2000)))
    data = open(p["rgb"], "rb").read()
    with open(p["truncated_image"], "wb") as f:
        f.write(data[: len(data) // 2])
    return p


def _sine(freq, sr, seconds, amp=0.5):
    import numpy as np

    t = np.arange(int(round(sr * seconds))) / sr
    return (amp * np.sin(2 * np.pi * freq * t)).astype("float32")


def _make_audios(folder: str) -> dict[str, str]:
    import numpy as np
    import soundfile as sf

    p = {n: os.path.join(folder, f) for n, f in [
        ("tone16k", "tone16k.wav"), ("tone44k_stereo", "tone44k_stereo.wav"), ("tone8k_flac", "tone8k.flac"),
        ("tone_mp3", "tone.mp3"), ("noisy", "noisy.wav"), ("silent", "silent.wav"), ("zero_length", "zero.wav"),
        ("speech", "speech.wav"), ("corrupt_audio", "corrupt.wav"), ("truncated_audio", "truncated.wav"),
        ("missing_audio", "missing.wav")]}
    sf.write(p["tone16k"], _sine(440, 16000, 1.0), 16000, subtype="PCM_16")
    stereo = np.stack([_sine(440, 44100, 0.5), _sine(880, 44100, 0.5, 0.25)], axis=1)
    sf.write(p["tone44k_stereo"], stereo, 44100, subtype="PCM_16")
    sf.write(p["tone8k_flac"], _sine(300, 8000, 2.0), 8000, subtype="PCM_16")
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-i", p["tone16k"], "-c:a", "libmp3lame",
                    "-b:a", "64k", p["tone_mp3"]], check=True, capture_output=True)
    noise = np.random.default_rng(0).normal(0, 0.05, 16000).astype("float32")
    sf.write(p["noisy"], _sine(440, 16000, 1.0, 0.3) + noise, 16000, subtype="PCM_16")
    sf.write(p["silent"], np.zeros(16000, dtype="float32"), 16000, subtype="PCM_16")
    sf.write(p["zero_length"], np.zeros(0, dtype="float32"), 16000, subtype="PCM_16")
    if shutil.which("espeak-ng"):
        subprocess.run(["espeak-ng", "-w", p["speech"], "Data juicer checks the sound of this sentence."],
                       check=True, capture_output=True)
    else:  # keep the name valid where espeak-ng is absent; tests that need real speech are marked
        sf.write(p["speech"], _sine(200, 22050, 2.0), 22050, subtype="PCM_16")
    rnd = random.Random(1)
    with open(p["corrupt_audio"], "wb") as f:
        f.write(bytes(rnd.randrange(256) for _ in range(3000)))
    with wave.open(p["truncated_audio"], "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"\x00\x01" * 16000)
    data = open(p["truncated_audio"], "rb").read()
    with open(p["truncated_audio"], "wb") as f:
        f.write(data[: 44 + 320])  # header still says 32000 data bytes
    return p


def make_media_files(folder) -> dict[str, str]:
    """Write every test image and audio under ``folder``; ``{name: absolute path}``."""
    folder = os.path.abspath(str(folder))
    os.makedirs(folder, exist_ok=True)
    return {**_make_images(folder), **_make_audios(folder)}


@pytest.fixture(scope="session")
def media_files(tmp_path_factory) -> dict[str, str]:
    """``{name: path}`` of the test images and audios (made once per test session)."""
    return make_media_files(tmp_path_factory.mktemp("media"))
