"""video_duration_filter, video_resolution_filter, video_aspect_ratio_filter on generated clips.

Expected stats are Data-Juicer 1.6.1's on the same files (its ops were run on them)."""

import psutil
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401


def op(name, **kw):
    return OPERATORS.get(name)(**kw)


def rows_of(video_files, *groups):
    return [{"text": str(i), "videos": [video_files[n] for n in g]} for i, g in enumerate(groups)]


def test_duration_stats_and_any_all(video_files):
    rows = rows_of(video_files, ["motion"], ["short", "long"], ["one_frame"], [])
    out = run_ops_on_rows([op("video_duration_filter", min_duration=1, max_duration=5)], rows)
    assert [r["text"] for r in out] == ["0", "1", "3"]
    assert [r[Fields.stats]["video_duration"] for r in out] == [[2.0], [0.3, 5.0], []]
    out = run_ops_on_rows([op("video_duration_filter", min_duration=0.2, max_duration=3, any_or_all="all")],
                          rows_of(video_files, ["motion", "short"], ["short", "long"]))
    assert [r["text"] for r in out] == ["0"]


def test_duration_vfr_and_webm(video_files):
    out = run_ops_on_rows([op("video_duration_filter")], rows_of(video_files, ["vfr", "webm"]))
    assert out[0][Fields.stats]["video_duration"] == [2.7, 1.0]


def test_resolution(video_files):
    rows = rows_of(video_files, ["motion"], ["portrait"], ["wide"])
    out = run_ops_on_rows([op("video_resolution_filter", min_width=60, max_height=50)], rows)
    assert [r["text"] for r in out] == ["0", "2"]
    assert out[1][Fields.stats]["video_width"] == [128] and out[1][Fields.stats]["video_height"] == [32]
    out = run_ops_on_rows([op("video_resolution_filter", min_width=60, any_or_all="all")],
                          rows_of(video_files, ["motion", "portrait"]))
    assert out == []


def test_aspect_ratio(video_files):
    rows = rows_of(video_files, ["motion"], ["portrait"], ["wide"], ["motion", "wide"])
    out = run_ops_on_rows([op("video_aspect_ratio_filter")], rows)  # 9/21 .. 21/9
    assert [r["text"] for r in out] == ["0", "1", "3"]
    assert out[0][Fields.stats]["video_aspect_ratios"] == [64 / 48]
    assert out[1][Fields.stats]["video_aspect_ratios"] == [0.75]
    assert out[2][Fields.stats]["video_aspect_ratios"] == [64 / 48, 4.0]
    out = run_ops_on_rows([op("video_aspect_ratio_filter", min_ratio="1:1", any_or_all="all")], rows)
    assert [r["text"] for r in out] == ["0"]


def test_bad_params():
    with pytest.raises(ValueError, match="any_or_all"):
        op("video_duration_filter", any_or_all="some")
    with pytest.raises(ValueError, match="min_ratio"):
        op("video_aspect_ratio_filter", min_ratio="wide")
    with pytest.raises(ValueError, match="video_backend"):
        op("video_duration_filter", video_backend="decord")


def test_reuses_stats_without_opening(video_files):
    rows = [{"text": "a", "videos": [video_files["missing"]], Fields.stats: {"video_duration": [4.0]}}]
    assert len(run_ops_on_rows([op("video_duration_filter", max_duration=5)], rows)) == 1


@pytest.mark.parametrize("bad", ["missing", "corrupt", "truncated"])
def test_bad_video_raises_naming_it(video_files, bad):
    with pytest.raises(RuntimeError, match=video_files[bad].rsplit("/", 1)[1]):
        run_ops_on_rows([op("video_resolution_filter", skip_op_error=False)], rows_of(video_files, [bad]))


def test_fused_filters_probe_each_video_once_and_close_it(video_files, monkeypatch):
    from data_juicer.media import video as V

    calls = []
    real = V.video_info
    monkeypatch.setattr(V, "video_info", lambda p, c=None: calls.append(p) or real(p, c))
    rows = rows_of(video_files, ["motion", "motion"], ["wide"])
    for r in rows:
        r[Fields.context] = {}
    before = psutil.Process().num_fds()
    ops = [op("video_duration_filter"), op("video_resolution_filter"), op("video_aspect_ratio_filter", max_ratio="5")]
    out = run_ops_on_rows(ops, rows)
    assert len(out) == 2 and calls == [video_files["motion"], video_files["wide"]]
    assert psutil.Process().num_fds() == before
