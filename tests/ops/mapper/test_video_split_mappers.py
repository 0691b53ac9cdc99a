"""video_split_by_duration_mapper / video_split_by_key_frame_mapper.

Expected (duration, frame count, bytes) of every clip and the rewritten texts are Data-Juicer
1.6.1's, from its ops run on the same generated files (byte sizes equal too)."""

import os

import psutil
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.media.video import video_info
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401

V, E = "<__dj__video>", "<|__dj__eoc|>"


def run(name, rows, **kw):
    return run_ops_on_rows([OPERATORS.get(name)(**kw)], rows)


def desc(paths):
    return [(video_info(p)["duration"], video_info(p)["frames"], os.path.getsize(p)) for p in paths]


def two_rows(video_files, second="motion"):
    return [{"text": f"{V} a {E} b {V}", "videos": [video_files["long"], video_files[second]]},
            {"text": "nothing", "videos": []}]


def test_split_by_duration_equals_data_juicer(video_files, tmp_path):
    out = run("video_split_by_duration_mapper", two_rows(video_files), split_duration=2, save_dir=str(tmp_path))
    assert [r["text"] for r in out] == [f"{V} a {E} b {V}", f"{V * 3} a {E} b {V}{E}", "nothing"]
    assert desc(out[1]["videos"]) == [(2.0, 20, 8237), (2.0, 20, 8812), (1.0, 10, 4749), (2.0, 20, 10975)]
    assert out[1]["videos"][3] == video_files["motion"]  # not longer than split_duration: not cut
    assert out[1][Fields.source_file] == [video_files["long"]] * 3 + [video_files["motion"]]
    assert out[0][Fields.source_file] == [video_files["long"], video_files["motion"]]
    assert out[2]["videos"] == [] and out[2][Fields.source_file] == []


def test_split_by_duration_overlap_and_min_last(video_files, tmp_path):
    rows = [{"text": f"x {V}", "videos": [video_files["audio"]]}]
    out = run("video_split_by_duration_mapper", rows, split_duration=1.5, overlap_duration=0.5,
              min_last_split_duration=0.6, save_dir=str(tmp_path), keep_original_sample=False)
    assert len(out) == 1 and out[0]["text"] == f"x {V * 2}{E}"
    assert desc(out[0]["videos"]) == [(1.5, 15, 18895), (1.0, 10, 13117)]
    assert all(video_info(p)["has_audio"] for p in out[0]["videos"])
    out = run("video_split_by_duration_mapper", rows, split_duration=1.5, overlap_duration=0.5,
              min_last_split_duration=1.1, save_dir=str(tmp_path / "b"), keep_original_sample=False)
    assert len(out[0]["videos"]) == 1


def test_split_by_duration_av_backend_reencodes(video_files, tmp_path):
    rows = [{"text": f"{V} a {E} b {V}", "videos": [video_files["long"], video_files["motion"]]}]
    out = run("video_split_by_duration_mapper", rows, split_duration=1, keep_original_sample=False,
              video_backend="av", save_dir=str(tmp_path))
    assert desc(out[0]["videos"]) == [(1.1, 11, 4045), (1.1, 11, 3992), (1.1, 11, 3981), (1.1, 11, 3856),
                                      (1.0, 10, 2934), (1.1, 11, 5045), (1.0, 10, 4111)]


def test_split_by_key_frame_equals_data_juicer(video_files, tmp_path):
    rows = two_rows(video_files, "vfr")
    out = run("video_split_by_key_frame_mapper", rows, save_dir=str(tmp_path / "av"))
    assert out[1]["text"] == f"{V * 5} a {E} b {V * 3}{E}"
    assert desc(out[1]["videos"]) == [(1.1, 11, 4045), (1.1, 11, 3992), (1.1, 11, 3981), (1.1, 11, 3856),
                                      (1.0, 10, 2934), (0.4, 4, 2700), (0.9, 5, 3801), (1.0, 4, 2984)]
    out = run("video_split_by_key_frame_mapper", two_rows(video_files, "vfr"), video_backend="ffmpeg",
              save_dir=str(tmp_path / "ff"))
    assert desc(out[1]["videos"]) == [(1.0, 10, 4849), (1.0, 10, 4233), (1.0, 10, 5265), (1.0, 10, 4392),
                                      (1.0, 10, 4749), (0.6, 4, 3402), (1.0, 4, 3162), (1.1, 4, 3368)]


def test_rerun_gives_same_paths_and_no_temp_files(video_files, tmp_path):
    kw = dict(split_duration=2, save_dir=str(tmp_path))
    a = run("video_split_by_duration_mapper", two_rows(video_files), **kw)
    b = run("video_split_by_duration_mapper", two_rows(video_files), **kw)
    assert a[1]["videos"] == b[1]["videos"]
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(p) for p in a[1]["videos"][:3])
    c = run("video_split_by_duration_mapper", two_rows(video_files), split_duration=2.5, save_dir=str(tmp_path))
    assert not set(c[1]["videos"][:2]) & set(a[1]["videos"])


def test_default_save_dir_is_beside_the_source(video_files, monkeypatch):
    monkeypatch.delenv("DJ_PRODUCED_DATA_DIR", raising=False)
    out = run("video_split_by_duration_mapper", [{"text": f"{V}", "videos": [video_files["long"]]}],
              split_duration=4, keep_original_sample=False)
    folder = os.path.join(os.path.dirname(video_files["long"]), "__dj__produced_data__",
                          "video_split_by_duration_mapper")
    assert [os.path.dirname(p) for p in out[0]["videos"]] == [folder, folder]


def test_not_legacy_bytes_and_save_field(video_files, tmp_path):
    rows = [{"text": "no tokens", "videos": [video_files["long"]]}]
    out = run("video_split_by_duration_mapper", rows, split_duration=3, legacy_split_by_text_token=False,
              output_format="bytes", save_field="clips", save_dir=str(tmp_path), keep_original_sample=False)
    assert out[0]["text"] == "" and out[0]["videos"] == [video_files["long"]]
    assert [len(b) for b in out[0]["clips"]] == [os.path.getsize(p) for p in sorted(
        os.path.join(tmp_path, f) for f in os.listdir(tmp_path))]


def test_params_checked():
    with pytest.raises(ValueError, match="overlap_duration"):
        OPERATORS.get("video_split_by_duration_mapper")(split_duration=2, overlap_duration=2)
    with pytest.raises(ValueError, match="output_format"):
        OPERATORS.get("video_split_by_key_frame_mapper")(output_format="gif")


@pytest.mark.parametrize("bad", ["missing", "corrupt"])
def test_bad_video_fails_the_sample_naming_it(video_files, bad, tmp_path):
    before = psutil.Process().num_fds()
    with pytest.raises(RuntimeError, match=os.path.basename(video_files[bad])):
        run("video_split_by_key_frame_mapper", [{"text": V, "videos": [video_files[bad]]}],
            save_dir=str(tmp_path), skip_op_error=False)
    assert psutil.Process().num_fds() <= before  # none left open (a collected file of an earlier test may close)
