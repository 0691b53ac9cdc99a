"""video_human_tracks_face_demographic_mapper: fast tests touch no TensorFlow (fake weights files
are enough to build the op; errors come before a model loads); the slow ones run DeepFace's real
loaders, pre- and post-processing on tiny seeded models (tests/models/deepface_tiny_models.py)."""
import pickle

import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.face_track_data import make_case, track, write_track, write_video
from tests.ops.mapper.llm_op_helpers import run_recipe

NAME = "video_human_tracks_face_demographic_mapper"
TAG = "video_facetrack_attribute_demographic"
TRACKS = "human_track_data_path"
FILES = ("age_model_weights.h5", "gender_model_weights.h5", "race_model_single_batch.h5")
TINY = "tests.models.deepface_tiny_models"


@pytest.fixture
def fake_weights(tmp_path, monkeypatch):
    """A DEEPFACE_HOME whose weights files exist (enough to build the op, not to run it)."""
    home = tmp_path / "dfhome"
    (home / ".deepface" / "weights").mkdir(parents=True)
    for f in FILES:
        (home / ".deepface" / "weights" / f).write_bytes(b"not weights")
    monkeypatch.setenv("DEEPFACE_HOME", str(home))
    monkeypatch.delenv("DEEPFACE_BACKEND_ENGINE", raising=False)
    return home


@pytest.fixture
def tiny_weights(tmp_path, monkeypatch):
    """DEEPFACE_HOME with the tiny models' seeded weights; every worker imports the tiny trunk."""
    from tests.models import deepface_tiny_models as tiny

    home = tiny.write_weights(tmp_path / "tinyhome", seed=3)
    monkeypatch.setenv("DEEPFACE_HOME", home)
    monkeypatch.setenv("DJ_DEEPFACE_MODULES", TINY)
    return home


def build(tmp_path, **kw):
    return OPERATORS.get(NAME)(original_data_save_path=str(tmp_path / "attrs"), **kw)


def rows(videos, tracks):
    return {"videos": videos, Fields.meta: [{TRACKS: t} for t in tracks]}


# -- fast ---------------------------------------------------------------------------------------
def test_defaults_and_bad_interval(fake_weights, tmp_path):
    op = OPERATORS.get(NAME)()
    assert (op.original_data_save_path, op.detect_interval, op.tag_field_name) == (
        "./outputs/demographic", 5, TAG)
    assert op.deepface_home == str(fake_weights)
    for bad in (0, -2, 2.5):
        with pytest.raises(ValueError, match="detect_interval must be a positive integer"):
            build(tmp_path, detect_interval=bad)


def test_missing_weights_name_every_path(tmp_path, monkeypatch):
    home, models = tmp_path / "nohome", tmp_path / "models"
    (home / ".deepface" / "weights").mkdir(parents=True)
    (home / ".deepface" / "weights" / "age_model_weights.h5").write_bytes(b"x")  # one of three
    monkeypatch.setenv("DEEPFACE_HOME", str(home))
    monkeypatch.setenv("DJ_MODELS_DIR", str(models))
    monkeypatch.delenv("DEEPFACE_BACKEND_ENGINE", raising=False)
    with pytest.raises(FileNotFoundError) as e:
        build(tmp_path)
    msg = str(e.value)
    assert f"{home}/.deepface/weights/gender_model_weights.h5" in msg
    assert f"{home}/.deepface/weights/race_model_single_batch.h5" in msg
    assert f"{home}/.deepface/weights/age_model_weights.h5;" not in msg  # that one is there
    assert f"{models}/.deepface/weights/age_model_weights.h5" in msg
    assert "never downloaded" in msg and "$DEEPFACE_HOME" in msg


def test_weights_in_the_model_folder(tmp_path, monkeypatch):
    models = tmp_path / "models"
    (models / ".deepface" / "weights").mkdir(parents=True)
    for f in FILES:
        (models / ".deepface" / "weights" / f).write_bytes(b"x")
    monkeypatch.setenv("DEEPFACE_HOME", str(tmp_path / "empty"))
    monkeypatch.setenv("DJ_MODELS_DIR", str(models))
    assert build(tmp_path).deepface_home == str(models)


def test_no_tracks_and_no_videos_load_nothing(fake_weights, tmp_path):
    video = write_video(tmp_path / "v.avi", frames=3)
    out = build(tmp_path).process_batched(rows([[video], [video, video], []], [[[]], [[], []], []]))
    assert [m[TAG] for m in out[Fields.meta]] == [[[]], [[], []], []]
    assert not (tmp_path / "attrs").exists()


def test_needs_the_extraction_mapper_first(fake_weights, tmp_path):
    with pytest.raises(ValueError, match="must run after video_human_tracks_extraction_mapper"):
        build(tmp_path).process_batched({"videos": [[]], Fields.meta: [{}]})


def test_bad_track_inputs_fail_clearly(fake_weights, tmp_path):
    video = write_video(tmp_path / "v.avi", frames=10)
    op = build(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"track file '.*gone.pkl' of video .* does not exist"):
        op.process_batched(rows([[video]], [[[{"bbox_path": str(tmp_path / "gone.pkl")}]]]))
    (tmp_path / "junk.pkl").write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="is not a track pickle"):
        op.process_batched(rows([[video]], [[[{"bbox_path": str(tmp_path / "junk.pkl")}]]]))
    late = write_track(tmp_path / "late.pkl", track(range(5, 15)))
    with pytest.raises(ValueError, match="has 10 frames but its tracks name frame 10"):
        op.process_batched(rows([[video]], [[[late]]]))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        op.process_batched(rows([[str(tmp_path / "no.avi")]], [[[late]]]))


def test_missing_track_file_goes_to_the_ledger(fake_weights, tmp_path):
    video = write_video(tmp_path / "v.avi", frames=3)
    good = {"videos": [video], Fields.meta: {TRACKS: [[]]}, "text": "a"}
    bad = {"videos": [video], Fields.meta: {TRACKS: [[{"bbox_path": str(tmp_path / "gone.pkl")}]]}, "text": "b"}
    rc, out, ledger = run_recipe(tmp_path / "job", [good, bad],
                                 [{NAME: {"original_data_save_path": str(tmp_path / "attrs")}}])
    assert rc == 0
    assert [(o["text"], o[Fields.meta][TAG]) for o in out] == [("a", [[]])]
    assert len(ledger) == 1 and ledger[0]["op"] == NAME and ledger[0]["error_type"] == "FileNotFoundError"
    assert "gone.pkl" in ledger[0]["message"]


def test_bad_setup_module_is_named(fake_weights, tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_DEEPFACE_MODULES", "no_such_module_here")
    video = write_video(tmp_path / "v.avi", frames=8)
    good = write_track(tmp_path / "t.pkl", track(range(8)))
    with pytest.raises(ImportError, match=r"\$DJ_DEEPFACE_MODULES names module 'no_such_module_here'"):
        build(tmp_path).process_batched(rows([[video]], [[[good]]]))


def test_dj_install_pins_opencv_contrib():
    assert OPERATORS.get(NAME).required_packages({}) == (
        "deepface", "tensorflow", "tf-keras", "opencv-contrib-python-headless")


def test_median_and_share():
    from data_juicer.ops.mapper.video_human_tracks_face_demographic_mapper import median, most_frequent

    assert (median([40, 20, 30]), median([41, 20, 30, 50])) == (30, 35.5)
    assert most_frequent(["Man", "Woman", "Man"]) == ["Man", str(2 / 3)]
    assert most_frequent([]) == [None, "0"]


# -- slow: real TensorFlow inference on the tiny models -----------------------------------------
# Data-Juicer 1.6.1's op on the same tiny models (seed 3) and case, detect_interval 3
# (tests/models/deepface_dj_reference.py): per track, the ages, dominant genders and races of the
# sampled frames, then its meta entry.
DJ_FRAMES = [[5, 8, 11, 14, 17, 20, 23], list(range(10, 90, 5))]
DJ_AGES = [[50, 47, 41, 45, 52, 47, 41], [45, 45, 48, 48, 45, 45, 47, 44, 46, 45, 47, 45, 45, 45, 44, 45]]
DJ_GENDERS = ["WWWWWWW", "WWWWWWWWWWWWWMMM"]
L, M, B = "latino hispanic", "middle eastern", "black"
DJ_RACES = [[L, M, L, L, L, M, L], [L, L, M, L, L, B, L, L, L, B, L, M, B, L, L, L]]
DJ_META = [{"age": 47, "gender": ["Woman", "1.0"], "race": [L, "0.7142857142857143"]},
           {"age": 45.0, "gender": ["Woman", "0.8125"], "race": [L, "0.6875"]}]
DJ_RACE_SCORES_T0_F5 = {"asian": 0.14389, "indian": 0.44447, "black": 12.88015, "white": 1.53674,
                        "middle eastern": 15.46684, "latino hispanic": 69.52792}


@pytest.mark.slow
def test_matches_data_juicer(tiny_weights, tmp_path):
    video, tracks = make_case(tmp_path / "case")
    op = build(tmp_path, detect_interval=3)
    other = write_video(tmp_path / "other.avi", frames=2)
    out = op.process_batched(rows([[other, video], [video]], [[[], tracks], [[]]]))[Fields.meta]
    assert out[1][TAG] == [[]]
    first, second = out[0][TAG]
    assert first == []
    assert [{k: v for k, v in t.items() if k != "face_attribute_path"} for t in second] == DJ_META
    assert [t["face_attribute_path"] for t in second] == [str(tmp_path / "attrs" / f"clip_{k}.pkl") for k in (0, 1)]
    for k, t in enumerate(second):
        with open(t["face_attribute_path"], "rb") as f:
            raw = pickle.load(f)
        assert list(raw) == DJ_FRAMES[k]
        faces = [r[0] for r in raw.values()]
        assert [f["age"] for f in faces] == DJ_AGES[k]
        assert "".join(f["dominant_gender"][0] for f in faces) == DJ_GENDERS[k]
        assert [f["dominant_race"] for f in faces] == DJ_RACES[k]
    with open(second[0]["face_attribute_path"], "rb") as f:
        first_face = pickle.load(f)[5][0]
    assert {a: float(v) for a, v in first_face["race"].items()} == pytest.approx(DJ_RACE_SCORES_T0_F5, abs=1e-4)
    # the 36x36 crop of frame 5 (s = 12 -> 24 px pad) as DeepFace's "skip" region (it drops a pixel)
    assert (first_face["region"]["x"], first_face["region"]["w"], first_face["region"]["h"]) == (0, 35, 35)
    assert first_face["face_confidence"] == 0


@pytest.mark.slow
def test_through_dj_process(tiny_weights, tmp_path):
    video, tracks = make_case(tmp_path / "case")
    row = {"videos": [video], Fields.meta: {TRACKS: [tracks]}, "text": "x"}
    rc, out, ledger = run_recipe(tmp_path / "job", [row], [{NAME: {
        "original_data_save_path": str(tmp_path / "attrs"), "detect_interval": 3}}])
    assert rc == 0 and ledger == []
    got = out[0][Fields.meta][TAG][0]
    assert [{k: v for k, v in t.items() if k != "face_attribute_path"} for t in got] == DJ_META
