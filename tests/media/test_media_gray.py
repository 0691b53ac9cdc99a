"""The grey image shared by the subplot and face ops of a pass (media.image.to_gray / row_gray)."""

import os

import cv2
import numpy as np
import pytest

import data_juicer.media.image as mimage
from data_juicer.core.runner import run_ops_on_rows
from data_juicer.media.image import load_image, pil_to_bgr, row_gray, to_gray
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401
from tests.media.testdata import real_testdata  # noqa: F401


def dj_gray(img):
    """Data-Juicer's grey: cvtColor(BGR2GRAY) of the flipped (pil_to_opencv) array."""
    return cv2.cvtColor(pil_to_bgr(img), cv2.COLOR_BGR2GRAY)


def test_one_pixel_literal(media_files):
    img = load_image(media_files["one_px"])  # (10, 20, 30)
    # 0.299*10 + 0.587*20 + 0.114*30 = 18.15
    assert to_gray(img).tolist() == [[18]]
    assert to_gray(img).dtype == np.uint8


@pytest.mark.parametrize("name", ["png", "gray", "rgba", "cmyk", "palette", "exif_rotated", "wide"])
def test_same_pixels_as_data_juicer_on_drawings(media_files, name):
    img = load_image(media_files[name])
    assert np.array_equal(to_gray(img), dj_gray(img))


def test_non_rgb_pil_is_made_rgb_first():
    from PIL import Image

    img = Image.new("L", (3, 2), 77)
    assert to_gray(img).tolist() == [[77, 77, 77], [77, 77, 77]]


def test_same_pixels_as_data_juicer_on_photos(real_testdata):
    import glob

    photos = sorted(glob.glob(f"{real_testdata}/image/skimage/*.png"))[:6]
    assert photos
    for p in photos:
        img = load_image(p)
        g = to_gray(img)
        assert g.shape == (img.height, img.width)
        assert np.array_equal(g, dj_gray(img)), p


def test_row_gray_is_kept_in_the_context(media_files):
    img = load_image(media_files["png"])
    samples = {"images": [[media_files["png"]]], Fields.context: [{}]}
    a = row_gray(samples, 0, media_files["png"], img)
    b = row_gray(samples, 0, media_files["png"], img)
    assert a is b
    # no context (an op run alone): computed each time, nothing stored
    c = row_gray({"images": [[media_files["png"]]]}, 0, media_files["png"], img)
    assert c is not a and np.array_equal(a, c)


def test_subplot_and_face_ops_convert_each_image_once(media_files, monkeypatch):
    m = media_files
    calls = []
    real = mimage.to_gray

    def counting(img):
        calls.append(img.size)
        return real(img)

    monkeypatch.setattr(mimage, "to_gray", counting)
    rows = [{"id": 0, "images": [m["png"], m["wide"], m["png"]]}, {"id": 1, "images": [m["gray"]]}]
    subplot = OPERATORS.get("image_subplot_filter")()
    faces = OPERATORS.get("image_face_count_filter")(min_face_count=0)
    ratio = OPERATORS.get("image_face_ratio_filter")()
    out = run_ops_on_rows([subplot, faces, ratio], [dict(r) for r in rows])
    assert sorted(calls) == sorted([(64, 48), (400, 10), (32, 32)])  # 3 distinct images, once each
    assert [r["id"] for r in out] == [0, 1]
    st = out[0][Fields.stats]
    assert st["face_counts"] == [0, 0, 0] and st["face_ratios"] == [0.0, 0.0, 0.0]
    assert st["image_subplot_confidence"] == [0.0, 0.0, 0.0] and st["subplot_detected"] is False


def _count_detections(monkeypatch, *modules):
    """Spy on ``faces.detect_faces`` (and the same name in ``modules``): returns the list of
    the image sizes it is called on."""
    import data_juicer.ops.common.faces as faces_mod

    calls = []
    real = faces_mod.detect_faces

    def counting(image, cascade, gray=None, **kw):
        calls.append(image.size)
        return real(image, cascade, gray=gray, **kw)

    monkeypatch.setattr(faces_mod, "detect_faces", counting)
    for mod in modules:
        monkeypatch.setattr(mod, "detect_faces", counting, raising=False)  # a direct call would count too
    return calls


def test_face_filters_share_detections(media_files, monkeypatch):
    m = media_files
    calls = _count_detections(monkeypatch)
    rows = [{"id": 0, "images": [m["png"], m["wide"]]}]
    count = OPERATORS.get("image_face_count_filter")(min_face_count=0)
    ratio = OPERATORS.get("image_face_ratio_filter")()
    run_ops_on_rows([count, ratio], [dict(r) for r in rows])
    assert sorted(calls) == [(64, 48), (400, 10)]  # one detection per image for both filters
    calls.clear()
    other = OPERATORS.get("image_face_ratio_filter")(cv_classifier="haarcascade_frontalface_default.xml")
    run_ops_on_rows([count, other], [dict(r) for r in rows])
    assert len(calls) == 4  # another cascade file: its own detections


def test_face_blur_mapper_shares_the_filters_detections(real_testdata, tmp_path, monkeypatch):
    """image_face_count_filter then image_face_blur_mapper (same cascade) in one pass: one detection
    per image, and the mapper writes the very file it writes alone."""
    import data_juicer.ops.mapper.image_face_blur_mapper as blur_mod

    calls = _count_detections(monkeypatch, blur_mod)
    src = os.path.join(real_testdata, "image", "skimage", "astronaut.png")
    count = OPERATORS.get("image_face_count_filter")(min_face_count=1, max_face_count=5)
    alone = run_ops_on_rows([OPERATORS.get("image_face_blur_mapper")(save_dir=str(tmp_path / "a"))],
                            [{"id": 0, "images": [src]}])
    assert len(calls) == 1
    calls.clear()
    both = run_ops_on_rows([count, OPERATORS.get("image_face_blur_mapper")(save_dir=str(tmp_path / "b"))],
                           [{"id": 0, "images": [src]}])
    assert len(calls) == 1  # the mapper took the filter's faces
    assert both[0][Fields.stats]["face_counts"] == [2]
    a, b = alone[0]["images"][0], both[0]["images"][0]
    assert a != src and os.path.basename(a) == os.path.basename(b)
    with open(a, "rb") as fa, open(b, "rb") as fb:
        assert fa.read() == fb.read()


def test_benchmark_recipe_decodes_once_and_detects_only_survivors(media_files, monkeypatch):
    """The five filters of benchmarks/media/image_run.py in one pass: every distinct image is decoded
    once, and the cascade runs only on the images of rows the four filters before it kept."""
    import data_juicer.ops.common.faces as faces_mod

    m = media_files
    decoded, detected = [], []
    real_load, real_detect = mimage.load_image, faces_mod.detect_faces
    monkeypatch.setattr(mimage, "load_image", lambda p, who="": decoded.append(p) or real_load(p, who))
    monkeypatch.setattr(faces_mod, "detect_faces",
                        lambda img, c, gray=None, **kw: detected.append(img.size) or real_detect(img, c, gray=gray, **kw))
    ops = [OPERATORS.get("image_shape_filter")(min_width=48, min_height=48),
           OPERATORS.get("image_aspect_ratio_filter")(min_ratio=0.2, max_ratio=5.0),
           OPERATORS.get("image_size_filter")(min_size="10B", max_size="2MB"),
           OPERATORS.get("image_subplot_filter")(),
           OPERATORS.get("image_face_count_filter")(min_face_count=0, max_face_count=5)]
    rows = [{"id": 0, "images": [m["one_px"]]},          # 1x1: dropped by the shape filter
            {"id": 1, "images": [m["png"], m["png"]]},   # 64x48 twice: kept
            {"id": 2, "images": [m["wide"]]}]            # 400x10: too low for the shape filter too
    out = run_ops_on_rows(ops, [dict(r) for r in rows])
    assert [r["id"] for r in out] == [1]
    assert sorted(decoded) == sorted([m["one_px"], m["png"], m["wide"]])
    assert detected == [(64, 48)]
    assert out[0][Fields.stats]["face_counts"] == [0, 0]


def test_opencv_one_thread_in_a_pool_worker_only():
    """media.image.opencv: a forked pool worker runs OpenCV on one thread (the np workers fill the
    cores); the process that forks it keeps OpenCV's default. Checked in a fresh interpreter (a fork
    of the test process would inherit whatever threads earlier tests left running)."""
    import subprocess
    import sys

    code = """
import multiprocessing as mp
import cv2
from PIL import Image
import data_juicer.media.image as mimage

def child(conn):
    mimage.to_gray(Image.new("RGB", (2, 2)))
    conn.send(cv2.getNumThreads())

if __name__ == "__main__":
    cv2.setNumThreads(2)
    assert mimage.opencv() is cv2
    ctx = mp.get_context("fork")
    r, w = ctx.Pipe(duplex=False)
    p = ctx.Process(target=child, args=(w,))
    p.start()
    print(cv2.getNumThreads(), r.recv(), end=" ")
    p.join()
    mimage.to_gray(Image.new("RGB", (2, 2)))
    print(cv2.getNumThreads())
"""
    import os

    env = {k: v for k, v in os.environ.items() if k != "DJ_OPENCV_POOL_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "1", "2"]  # driver before, worker, driver after
    # DJ_OPENCV_POOL_THREADS=0: the worker keeps OpenCV's count (here the driver's 2, inherited)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**env, "DJ_OPENCV_POOL_THREADS": "0"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "2", "2"]
