import io

import numpy as np
import pytest

from data_juicer.media import MediaError
from data_juicer.media.image import bgr_to_pil, load_image, load_row_images, pil_to_bgr
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401


@pytest.mark.parametrize("name,size,pixel", [
    ("png", (64, 48), (255, 255, 255)),
    ("gray", (32, 32), (0, 0, 0)),
    ("rgba", (40, 20), (0, 128, 0)),       # alpha dropped, not composited (as Data-Juicer)
    ("cmyk", (30, 30), (255, 0, 0)),       # C=0 M=255 Y=255 K=0 is red
    ("palette", (24, 16), (255, 255, 255)),
    ("exif_rotated", (20, 40), (0, 0, 0)),  # stored 40x20, orientation 6: upright 20x40
    ("one_px", (1, 1), (10, 20, 30)),
    ("wide", (400, 10), (128, 128, 128)),
])
def test_load_image_modes(media_files, name, size, pixel):
    img = load_image(media_files[name])
    assert img.mode == "RGB" and img.size == size
    assert img.getpixel((0, 0)) == pixel


def test_exif_rotation_moves_the_black_bar(media_files):
    img = load_image(media_files["exif_rotated"])
    # stored: black bar on the left 10 columns; rotated 90 clockwise it lies along the top
    assert img.getpixel((10, 2))[0] < 40 and img.getpixel((10, 30))[0] > 200


def test_bytes_are_not_exif_rotated(media_files):
    data = open(media_files["exif_rotated"], "rb").read()
    assert load_image(data).size == (40, 20)


@pytest.mark.parametrize("name,exc,needle", [
    ("missing_image", FileNotFoundError, "does not exist"),
    ("corrupt_image", MediaError, "cannot read image"),
    ("truncated_image", MediaError, "truncated"),
])
def test_bad_files_name_the_path(media_files, name, exc, needle):
    with pytest.raises(exc) as e:
        load_image(media_files[name])
    assert media_files[name] in str(e.value) and needle in str(e.value)


def test_bad_bytes():
    with pytest.raises(MediaError, match="12 bytes"):
        load_image(b"not an image")


def test_no_descriptor_left_open_for_gif(media_files):
    import os

    before = len(os.listdir("/proc/self/fd"))
    imgs = [load_image(media_files["palette"]) for _ in range(20)]
    assert len(os.listdir("/proc/self/fd")) == before and len(imgs) == 20


class _Op:
    name = "probe"
    image_key = "images"
    image_bytes_key = "image_bytes"


def test_load_row_images_context_and_bytes(media_files, monkeypatch):
    import data_juicer.media.image as mi

    calls = []
    real = mi.load_image
    monkeypatch.setattr(mi, "load_image", lambda p, who="": calls.append(p) or real(p, who))
    png, one = media_files["png"], media_files["one_px"]
    buf = io.BytesIO()
    real(media_files["wide"]).save(buf, format="PNG")
    samples = {"images": [[png, one, png], [one]], "image_bytes": [[None, buf.getvalue()], []],
               Fields.context: [{}, {}]}
    got = load_row_images(_Op(), samples, 0)
    assert list(got) == [png, one]
    assert got[one].size == (400, 10)  # taken from the bytes at its position, not from the file
    assert len(calls) == 2 and calls[0] == png
    # a second op of the same fused pass decodes nothing
    again = load_row_images(_Op(), samples, 0)
    assert len(calls) == 2 and again[png] is got[png]
    assert set(samples[Fields.context][0]) == {png, one}
    # row 1 has no bytes: its one_px comes from the file
    assert load_row_images(_Op(), samples, 1)[one].size == (1, 1)


def test_load_row_images_without_context(media_files):
    samples = {"images": [[media_files["gray"]]]}
    assert load_row_images(_Op(), samples, 0)[media_files["gray"]].size == (32, 32)
    assert Fields.context not in samples


def test_bgr_roundtrip(media_files):
    img = load_image(media_files["one_px"])
    arr = pil_to_bgr(img)
    assert arr.shape == (1, 1, 3) and arr.flags["C_CONTIGUOUS"]
    assert arr[0, 0].tolist() == [30, 20, 10]
    assert bgr_to_pil(arr).getpixel((0, 0)) == (10, 20, 30)
    assert bgr_to_pil(np.full((2, 3), 7, np.uint8)).getpixel((2, 1)) == (7, 7, 7)
