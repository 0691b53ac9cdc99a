"""video_face_ratio_filter gives the same output on the Ray executor as on the default one."""
import json
import os

import pytest

from tests.conftest import read_jsonl
from tests.media.face_videos import make_face_videos
from tests.media.testdata import real_testdata  # noqa: F401
from tests.media.video_files import video_files  # noqa: F401

V = "<__dj__video>"


def _rows(path):
    rows = read_jsonl(path)
    for r in rows:
        if isinstance(r.get("__dj__stats__"), str):
            r["__dj__stats__"] = json.loads(r["__dj__stats__"])
    return sorted(rows, key=lambda r: r["id"])


@pytest.mark.slow  # 7 s; tests/ray/test_ray_video_parity.py keeps video ops on Ray in the default suite
def test_video_face_ratio_same_on_ray(run_both, real_testdata, video_files, tmp_path):
    faces = make_face_videos(tmp_path / "faces", os.path.join(real_testdata, "image", "skimage"))
    rows = [{"id": 0, "text": f"{V} face", "videos": [faces["face"]]},
            {"id": 1, "text": f"{V} mixed", "videos": [faces["mixed"]]},
            {"id": 2, "text": f"{V} missing", "videos": [video_files["missing"]]},
            {"id": 3, "text": f"{V}{V} two", "videos": [faces["portrait"], faces["no_face"]]}]
    d, r = run_both(rows, [{"video_face_ratio_filter": {"threshold": 0.5, "any_or_all": "any"}}],
                    keep_stats_in_res_ds=True)
    out_d, out_r = _rows(d / "result.jsonl"), _rows(r / "result.jsonl")
    assert out_d == out_r
    assert [(x["id"], x["__dj__stats__"]["video_face_exist"]) for x in out_d] == [
        (0, [1.0]), (1, [0.6]), (3, [1.0, 0.0])]
