import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401


def make(**kw):
    return OPERATORS.get("image_aspect_ratio_filter")(**kw)


def test_ratios_any_and_all(media_files):
    m = media_files
    rows = [{"id": 0, "images": [m["png"], m["wide"]]}, {"id": 1, "images": [m["wide"]]},
            {"id": 2, "images": []}, {"id": 3, "images": [m["exif_rotated"], m["exif_rotated"]]}]
    out = run_ops_on_rows([make()], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [0, 2, 3]
    assert out[0][Fields.stats]["aspect_ratios"] == [64 / 48, 40.0]
    assert out[1][Fields.stats]["aspect_ratios"] == []
    assert out[2][Fields.stats]["aspect_ratios"] == [0.5, 0.5]  # upright 20x40
    assert [r["id"] for r in run_ops_on_rows([make(any_or_all="all")], [dict(r) for r in rows])] == [2, 3]


def test_bounds_are_closed_by_default(media_files):
    rows = [{"images": [media_files["exif_rotated"]]}]
    assert len(run_ops_on_rows([make(min_ratio=0.5)], [dict(rows[0])])) == 1
    assert len(run_ops_on_rows([make(min_ratio=0.5, min_closed_interval=False)], [dict(rows[0])])) == 0


def test_reuses_stat_and_bad_strategy(media_files):
    rows = [{"images": [media_files["missing_image"]], Fields.stats: {"aspect_ratios": [1.0]}}]
    assert len(run_ops_on_rows([make()], rows)) == 1  # not reloaded
    with pytest.raises(ValueError, match="any_or_all|keep strategy"):
        make(any_or_all="most")


def test_bad_images_fail_their_sample_only(media_files):
    from data_juicer.core.runner import FusedRun, OpError
    from data_juicer.utils.batch import rows_to_batch

    m = media_files
    rows = [{"id": 0, "images": [m["png"]]}, {"id": 1, "images": [m["missing_image"]]},
            {"id": 2, "images": [m["corrupt_image"]]}, {"id": 3, "images": [m["truncated_image"]]}]
    kept, failed = FusedRun([make()], mark_errors=False).apply(rows_to_batch(rows))
    assert kept["id"] == [0] and failed["id"] == [1, 2, 3]
    assert "missing.jpg" in failed["__dj__error_tmp__"][0] and "FileNotFoundError" in failed["__dj__error_tmp__"][0]
    assert "corrupt.jpg" in failed["__dj__error_tmp__"][1] and "MediaError" in failed["__dj__error_tmp__"][1]
    with pytest.raises(OpError, match="missing.jpg"):
        run_ops_on_rows([make(skip_op_error=False)], [dict(rows[1])])
