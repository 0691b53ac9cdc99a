import os

import numpy as np
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.media.image import load_image
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401
from tests.media.testdata import real_testdata  # noqa: F401


def make(**kw):
    return OPERATORS.get("image_face_blur_mapper")(**kw)


def test_no_face_keeps_the_image(media_files):
    out = run_ops_on_rows([make()], [{"images": [media_files["png"]]}, {"images": []}])
    assert out[0]["images"] == [media_files["png"]] and out[0][Fields.source_file] == [media_files["png"]]
    assert out[1][Fields.source_file] == []


def test_params():
    with pytest.raises(ValueError, match="blur_type"):
        make(blur_type="x")


@pytest.mark.slow
def test_astronaut_face_is_blurred(real_testdata, tmp_path):
    astro = f"{real_testdata}/image/skimage/astronaut.png"
    out = run_ops_on_rows([make(save_dir=str(tmp_path), radius=4)], [{"images": [astro]}])
    new = out[0]["images"][0]
    assert new != astro and os.path.dirname(new) == str(tmp_path) and new.endswith(".png")
    a, b = np.asarray(load_image(astro), int), np.asarray(load_image(new), int)
    changed = np.argwhere(np.abs(a - b).sum(axis=2) > 0)
    # only inside the detected boxes (her face is around x 170-270, y 60-160)
    assert len(changed) > 2000
    assert changed[:, 0].min() >= 0 and changed[:, 1].max() < 512
    assert np.array_equal(a[400:], b[400:])  # the lower part of the photo is untouched
    assert run_ops_on_rows([make(save_dir=str(tmp_path), radius=4)], [{"images": [astro]}])[0]["images"] == [new]
