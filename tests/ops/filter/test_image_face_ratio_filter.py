import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401
from tests.media.testdata import real_testdata  # noqa: F401


def make(**kw):
    return OPERATORS.get("image_face_ratio_filter")(**kw)


def test_no_face_is_ratio_zero(media_files):
    rows = [{"id": 0, "images": [media_files["png"]]}, {"id": 1, "images": []}]
    out = run_ops_on_rows([make()], rows)
    assert [r["id"] for r in out] == [0, 1]
    assert out[0][Fields.stats]["face_ratios"] == [0.0]
    assert [r["id"] for r in run_ops_on_rows([make(min_ratio=0.01)], [dict(r) for r in rows])] == [1]


def test_bad_params():
    with pytest.raises(ValueError, match="keep strategy"):
        make(any_or_all="none")


@pytest.mark.slow
def test_astronaut_largest_face(real_testdata):
    astro = f"{real_testdata}/image/skimage/astronaut.png"
    out = run_ops_on_rows([make(min_ratio=0.03, max_ratio=0.05)], [{"images": [astro]}])
    assert len(out) == 1
    # largest box 98x98 on a 512x512 image
    assert out[0][Fields.stats]["face_ratios"] == [98 * 98 / (512 * 512)]
