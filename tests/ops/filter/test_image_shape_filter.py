from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401


def make(**kw):
    return OPERATORS.get("image_shape_filter")(**kw)


def test_width_height_stats_and_strategy(media_files):
    m = media_files
    rows = [{"id": 0, "images": [m["png"], m["wide"]]}, {"id": 1, "images": [m["one_px"]]},
            {"id": 2, "images": []}, {"id": 3, "images": [m["cmyk"]]}]
    out = run_ops_on_rows([make(min_width=20, max_width=100, min_height=20)], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [0, 2, 3]
    assert out[0][Fields.stats]["image_width"] == [64, 400] and out[0][Fields.stats]["image_height"] == [48, 10]
    assert out[2][Fields.stats]["image_width"] == [30]
    out = run_ops_on_rows([make(min_width=20, max_width=100, min_height=20, any_or_all="all")], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [2, 3]


def test_exif_and_defaults(media_files):
    out = run_ops_on_rows([make()], [{"images": [media_files["exif_rotated"], media_files["one_px"]]}])
    assert out[0][Fields.stats]["image_width"] == [20, 1] and out[0][Fields.stats]["image_height"] == [40, 1]


def test_shares_decoded_images_with_aspect_filter(media_files, monkeypatch):
    import data_juicer.media.image as mi

    calls = []
    real = mi.load_image
    monkeypatch.setattr(mi, "load_image", lambda p, who="": calls.append(p) or real(p, who))
    ops = [make(), OPERATORS.get("image_aspect_ratio_filter")()]
    run_ops_on_rows(ops, [{"images": [media_files["png"], media_files["gray"]]}])
    assert len(calls) == 2  # each image decoded once for both filters
