"""Data-Juicer 1.6.1's own video_human_tracks_face_demographic_mapper on the tiny DeepFace models,
to check ours against it (not a test: run it with a Python that has py-data-juicer 1.6.1; the
packages it lacks, deepface and TensorFlow, are taken from this project's environment)::

    DEEPFACE_HOME=<home with the tiny weights> <dj python> tests/models/deepface_dj_reference.py \\
        <folder> <detect_interval> <out.json>

``<folder>`` gets the case of ``face_track_data.make_case`` and DJ's pickles (``<folder>/dj``);
out.json gets DJ's meta value and its raw per-track pickles (ages, dominant labels, race scores).
The test ``test_matches_data_juicer`` holds the values this printed (seed 3, detect_interval 3).
"""

import json
import os
import pickle
import sys

MAIN_SITE = os.environ.get("DJ_MAIN_SITE", "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(folder: str, interval: int, out: str) -> None:
    sys.path.append(MAIN_SITE)  # after DJ's own packages: only what its venv lacks comes from here
    sys.path.append(ROOT)
    import tests.models.deepface_tiny_models  # noqa: F401  the tiny trunk
    from data_juicer.ops.mapper.video_human_tracks_face_demographic_mapper import (
        VideoHumantrackFaceDemographicMapper,
    )
    from tests.models.face_track_data import make_case

    video, tracks = make_case(folder)
    op = VideoHumantrackFaceDemographicMapper(original_data_save_path=os.path.join(folder, "dj"),
                                              detect_interval=interval)
    meta = op.process_single({"videos": [video], "__dj__meta__": {"human_track_data_path": [tracks]}})
    res = meta["__dj__meta__"]["video_facetrack_attribute_demographic"]
    raw = []
    for track in res[0]:
        with open(track["face_attribute_path"], "rb") as f:
            r = pickle.load(f)
        raw.append({str(k): [v[0]["age"], v[0]["dominant_gender"], v[0]["dominant_race"],
                             {a: float(b) for a, b in v[0]["race"].items()}] for k, v in r.items()})
    with open(out, "w") as f:
        json.dump({"meta": res, "raw": raw}, f)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
