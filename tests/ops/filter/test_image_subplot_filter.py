from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401


def make(**kw):
    return OPERATORS.get("image_subplot_filter")(**kw)


def test_grid_is_dropped_photo_kept(media_files):
    m = media_files
    rows = [{"id": 0, "images": [m["grid"]]}, {"id": 1, "images": [m["png"]]}, {"id": 2, "images": []},
            {"id": 3, "images": [m["grid"], m["png"]]}]
    out = run_ops_on_rows([make()], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [1, 2]
    st = out[0][Fields.stats]
    assert st["image_subplot_confidence"] == [0.0] and st["horizontal_peak_count"] == [0]
    assert st["subplot_detected"] is False
    assert out[1][Fields.stats]["image_subplot_confidence"] == []
    # with 'all', a sample goes only when every image is a grid
    assert [r["id"] for r in run_ops_on_rows([make(any_or_all="all")], [dict(r) for r in rows])] == [1, 2, 3]


def test_grid_scores(media_files):
    # 4 horizontal and 4 vertical 3-px lines: Hough finds both edges of each (8 + 8 segments)
    conf, h, v = make().detect(__import__("data_juicer.media.image", fromlist=["x"]).load_image(media_files["grid"]))
    assert (h, v) == (8, 8)
    assert abs(conf - 0.6062120601554938) < 1e-9
    out = run_ops_on_rows([make(min_confidence=0.7)], [{"images": [media_files["grid"]]}])
    assert out[0][Fields.stats]["subplot_detected"] is False  # 0.606 < 0.7: kept


def test_line_requirements(media_files):
    # confidence passes, but 9 horizontal lines are required: kept
    assert len(run_ops_on_rows([make(min_horizontal_lines=9)], [{"images": [media_files["grid"]]}])) == 1
