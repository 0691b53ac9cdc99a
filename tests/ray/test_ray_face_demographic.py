"""video_human_tracks_face_demographic_mapper on Ray: DeepFace's models are built in the actors (from
the model folder, with the tiny trunk their $DJ_DEEPFACE_MODULES imports) and the output is the
default executor's, which is Data-Juicer 1.6.1's (tests/ops/mapper/test_video_human_tracks_face_demographic_mapper.py)."""
import pickle

import pytest

from tests.conftest import read_jsonl
from tests.models.face_track_data import make_case
from tests.ops.mapper.test_video_human_tracks_face_demographic_mapper import DJ_META, TAG, TINY, TRACKS

META = "__dj__meta__"


@pytest.mark.slow
def test_face_demographic_same_on_ray(run_both, tmp_path, monkeypatch):
    from tests.models import deepface_tiny_models as tiny

    models = tiny.write_weights(tmp_path / "models", seed=3)  # <models>/.deepface/weights/*.h5
    monkeypatch.setenv("DJ_MODELS_DIR", models)
    monkeypatch.setenv("DEEPFACE_HOME", str(tmp_path / "nothing_here"))
    monkeypatch.setenv("DJ_DEEPFACE_MODULES", TINY)
    video, tracks = make_case(tmp_path / "case")
    rows = [{"id": 0, "text": "a", "videos": [video], META: {TRACKS: [tracks]}},
            {"id": 1, "text": "b", "videos": [video], META: {TRACKS: [[]]}}]
    process = [{"video_human_tracks_face_demographic_mapper": {
        "original_data_save_path": str(tmp_path / "attrs"), "detect_interval": 3}}]
    default, ray = run_both(rows, process)
    a, b = read_jsonl(default / "result.jsonl"), read_jsonl(ray / "result.jsonl")
    sa, sb = read_jsonl(default / "result_stats.jsonl"), read_jsonl(ray / "result_stats.jsonl")
    assert [r["id"] for r in a] == [r["id"] for r in b] == [0, 1]
    assert [m[META][TAG] for m in sa] == [m[META][TAG] for m in sb]
    got = sb[0][META][TAG][0]
    assert [{k: v for k, v in t.items() if k != "face_attribute_path"} for t in got] == DJ_META
    assert sb[1][META][TAG] == [[]]
    with open(got[1]["face_attribute_path"], "rb") as f:
        assert len(pickle.load(f)) == 16
