import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401
from tests.media.testdata import real_testdata  # noqa: F401


def make(**kw):
    return OPERATORS.get("image_face_count_filter")(**kw)


def test_default_cascade_is_opencvs_bundled_one():
    import cv2

    assert make().cv_classifier.startswith(cv2.data.haarcascades)
    assert make().cv_classifier.endswith("haarcascade_frontalface_alt.xml")


def test_missing_cascade_names_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.xml.*looked at"):
        make(cv_classifier=str(tmp_path / "nope.xml"))
    bad = tmp_path / "bad.xml"
    bad.write_text("<not a cascade/>")
    with pytest.raises(ValueError, match="bad.xml' is not a valid OpenCV cascade"):
        make(cv_classifier=str(bad))  # checked when the op is built, not per sample


def test_no_faces_in_drawings(media_files):
    m = media_files
    rows = [{"id": 0, "images": [m["png"], m["gray"]]}, {"id": 1, "images": []}]
    out = run_ops_on_rows([make()], rows)
    assert [r["id"] for r in out] == [1]
    out = run_ops_on_rows([make(min_face_count=0)], [dict(rows[0])])
    assert out[0][Fields.stats]["face_counts"] == [0, 0]


@pytest.mark.slow
def test_astronaut(real_testdata, media_files):
    astro = f"{real_testdata}/image/skimage/astronaut.png"
    coffee = f"{real_testdata}/image/skimage/coffee.png"
    rows = [{"id": 0, "images": [astro, coffee]}, {"id": 1, "images": [coffee]}]
    out = run_ops_on_rows([make(min_face_count=1, max_face_count=3)], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [0]
    # haarcascade_frontalface_alt with scaleFactor 1.1 / minNeighbors 3 (OpenCV 4.13) finds her face
    # and one false positive on the flag patch
    assert out[0][Fields.stats]["face_counts"] == [2, 0]
    assert run_ops_on_rows([make(any_or_all="all", max_face_count=3)], [dict(rows[0])]) == []


def test_cascade_is_not_released_with_its_op():
    """The cascade (~1 MB) stays for the process's life: ending the op's pass releases nothing, so
    no full gc.collect() runs after the pass (models.loader.release_models)."""
    from data_juicer.models import loader

    op = make()
    key = ("opencv_cascade", op.cv_classifier)
    assert key in loader.loaded_models()
    assert loader.release_models(op.name) == 0
    assert key in loader.loaded_models()
    assert make().cv_classifier == op.cv_classifier
