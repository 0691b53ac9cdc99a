import os

import numpy as np
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.media.image import load_image
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import make_media_files


def make(**kw):
    return OPERATORS.get("image_blur_mapper")(**kw)


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.delenv("DJ_PRODUCED_DATA_DIR", raising=False)
    return make_media_files(tmp_path / "m")


def test_blur_always_writes_beside_source_and_rerun_is_stable(files):
    src = files["png"]
    rows = [{"images": [src, src, files["grid"]]}, {"images": []}]
    out = run_ops_on_rows([make(p=1.0)], [dict(r) for r in rows])
    new = out[0]["images"]
    assert new[0] == new[1] != src and os.path.isfile(new[0])
    assert os.path.dirname(new[0]) == os.path.join(os.path.dirname(src), "__dj__produced_data__", "image_blur_mapper")
    assert out[0][Fields.source_file] == [src, src, files["grid"]] and out[1][Fields.source_file] == []
    # the blurred copy differs from the drawing: edges are softened
    a, b = np.asarray(load_image(src), float), np.asarray(load_image(new[0]), float)
    assert a.shape == b.shape and 0 < np.abs(a - b).mean() < 30
    again = run_ops_on_rows([make(p=1.0)], [dict(r) for r in rows])
    assert again[0]["images"] == new


def test_p_zero_keeps_everything(files):
    out = run_ops_on_rows([make(p=0.0)], [{"images": [files["png"]]}])
    assert out[0]["images"] == [files["png"]]


def test_p_draw_is_per_image_and_deterministic(files):
    names = ["png", "gray", "rgba", "cmyk", "palette", "one_px", "wide", "tall", "grid", "rgb"]
    rows = [{"images": [files[n]]} for n in names]
    first = [r["images"][0] != files[n] for r, n in zip(run_ops_on_rows([make(p=0.5)], [dict(r) for r in rows]), names)]
    second = [r["images"][0] != files[n] for r, n in zip(run_ops_on_rows([make(p=0.5)], [dict(r) for r in rows]),
                                                           names)]
    assert first == second and 0 < sum(first) < len(names)


def test_save_dir_and_kernels(files, tmp_path):
    out = run_ops_on_rows([make(p=1, blur_type="box", radius=1, save_dir=str(tmp_path / "s"))],
                          [{"images": [files["one_px"]]}])
    assert os.path.dirname(out[0]["images"][0]) == str(tmp_path / "s")
    with pytest.raises(ValueError, match="blur_type"):
        make(blur_type="motion")
    with pytest.raises(ValueError, match="radius"):
        make(radius=-1)


def test_mean_blur_matches_pillow(files):
    from PIL import ImageFilter

    out = run_ops_on_rows([make(p=1, blur_type="mean")], [{"images": [files["png"]]}])
    want = load_image(files["png"]).filter(ImageFilter.BLUR)
    assert np.array_equal(np.asarray(load_image(out[0]["images"][0])), np.asarray(want))  # PNG: lossless


def test_image_bytes_get_the_new_file(files):
    src = files["png"]
    out = run_ops_on_rows([make(p=1)], [{"images": [src], "image_bytes": [open(src, "rb").read()]}])
    assert out[0]["image_bytes"][0] == open(out[0]["images"][0], "rb").read()
