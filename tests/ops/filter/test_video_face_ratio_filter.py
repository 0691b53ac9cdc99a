"""video_face_ratio_filter: dlib's frontal face detector over the frames of videos made from real
photos (scikit-image's astronaut has a frontal face; coffee has none)."""
import os
import sys

import pytest

import data_juicer.ops.filter.video_face_ratio_filter as vfr
from data_juicer.cli.process import main
from data_juicer.core.runner import run_ops_on_rows
from data_juicer.media.video import VideoError
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from data_juicer.utils.lazy import MissingDependencyError
from tests.conftest import read_jsonl
from tests.media.face_videos import make_face_videos
from tests.media.testdata import real_testdata  # noqa: F401
from tests.media.video_files import video_files  # noqa: F401

V = "<__dj__video>"
KEY = "video_face_exist"


def make(**kw):
    return OPERATORS.get("video_face_ratio_filter")(**kw)


@pytest.fixture(scope="module")
def faces(real_testdata, tmp_path_factory):
    return make_face_videos(tmp_path_factory.mktemp("faces"), os.path.join(real_testdata, "image", "skimage"))


def test_defaults_and_bad_params():
    op = make()
    assert (op.threshold, op.detect_interval, op.any) == (0.8, 1, False)
    assert op.requires == ("dlib-bin", "av")
    with pytest.raises(ValueError, match="keep strategy"):
        make(any_or_all="most")
    with pytest.raises(ValueError, match="detect_interval"):
        make(detect_interval=0)


def test_sample_without_videos_is_kept_with_empty_stat():
    out = run_ops_on_rows([make()], [{"id": 0, "videos": []}, {"id": 1}])
    assert [r["id"] for r in out] == [0, 1]
    assert [r[Fields.stats][KEY] for r in out] == [[], []]


def test_face_ratios_of_real_faces(faces):
    op = make()
    # the astronaut's face is found in every frame; in "mixed" only in the 6 astronaut frames of 10;
    # at 256x256 the face (44 px) is smaller than dlib's 80 px window
    assert [op.face_ratio(faces[k]) for k in ("face", "portrait", "mixed", "small_face", "no_face")] == \
        [1.0, 1.0, 0.6, 0.0, 0.0]
    # every 3rd frame (frames 3, 6, 9): 3 and 6 show the face
    assert make(detect_interval=3).face_ratio(faces["mixed"]) == 2 / 3
    assert make(detect_interval=4).face_ratio(faces["mixed"]) == 0.5  # frames 4 and 8


def test_any_or_all_and_threshold(faces):
    rows = [{"id": 0, "videos": [faces["face"], faces["mixed"]]},
            {"id": 1, "videos": [faces["no_face"]]},
            {"id": 2, "videos": [faces["portrait"], faces["portrait"]]}]
    out = run_ops_on_rows([make()], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [2]
    assert out[0][Fields.stats][KEY] == [1.0, 1.0]
    out = run_ops_on_rows([make(any_or_all="any")], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [0, 2]
    assert out[0][Fields.stats][KEY] == [1.0, 0.6]
    assert [r["id"] for r in run_ops_on_rows([make(threshold=0.5)], [dict(r) for r in rows])] == [0, 2]


def test_missing_and_corrupt_videos_raise_naming_the_path(video_files):
    with pytest.raises(FileNotFoundError, match="does_not_exist.mp4"):
        make().face_ratio(video_files["missing"])
    with pytest.raises(VideoError, match="corrupt.mp4"):
        make().face_ratio(video_files["corrupt"])


def test_bad_videos_go_to_the_ledger(faces, video_files, make_recipe, tmp_path):
    rows = [{"id": 0, "text": f"{V} face", "videos": [faces["face"]]},
            {"id": 1, "text": f"{V} missing", "videos": [video_files["missing"]]},
            {"id": 2, "text": f"{V} corrupt", "videos": [video_files["corrupt"]]},
            {"id": 3, "text": f"{V} no face", "videos": [faces["no_face"]]}]
    recipe = make_recipe(rows, [{"video_face_ratio_filter": {}}], keep_stats_in_res_ds=True,
                         export_path=str(tmp_path / "out" / "result.jsonl"))
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [(r["id"], r[Fields.stats][KEY]) for r in out] == [(0, [1.0])]
    ledger = []
    for root, _, names in os.walk(tmp_path):
        if "errors.jsonl" in names:
            ledger += read_jsonl(os.path.join(root, "errors.jsonl"))
    by_id = {e["sample"]["id"]: e for e in ledger}
    assert sorted(by_id) == [1, 2]
    assert "does_not_exist.mp4" in by_id[1]["message"] and "corrupt.mp4" in by_id[2]["message"]
    assert {e["op"] for e in ledger} == {"video_face_ratio_filter"}


def test_missing_dlib_is_a_clear_error(monkeypatch, faces):
    monkeypatch.setattr(vfr, "_DETECTOR", None)
    monkeypatch.setitem(sys.modules, "dlib", None)  # import dlib -> ImportError
    with pytest.raises(MissingDependencyError, match="pip install 'dlib-bin'"):
        make().face_ratio(faces["face"])
    monkeypatch.setattr(vfr.importlib.util, "find_spec", lambda name, *a: None)
    assert vfr.VideoFaceRatioFilter.missing_requirements() == ["dlib-bin", "av"]
