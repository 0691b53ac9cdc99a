"""No file descriptor is left open by a whole ``dj-process`` run over image, audio and video ops.

Data-Juicer 1.6.1 leaves PyAV containers and image files open (16 descriptors after the image
benchmark's 1,000 images); ours must close every file it opens, also on the error paths (missing,
corrupt and truncated media go to the error ledger). The run is in-process (np=1) so that every
descriptor it opens is this process's; it runs twice, so a cache that keeps files open would show.
"""
import gc
import os

import pytest

from data_juicer.cli.process import main
from tests.conftest import read_jsonl
from tests.media.files import media_files  # noqa: F401
from tests.media.video_files import video_files  # noqa: F401

PROCESS = [
    {"image_shape_filter": {"min_width": 8}},
    {"image_aspect_ratio_filter": {"min_ratio": 0.1, "max_ratio": 10}},
    {"image_size_filter": {"max_size": "10MB"}},
    {"image_subplot_filter": {}},
    {"image_face_count_filter": {"min_face_count": 0}},
    {"image_blur_mapper": {"p": 1.0}},
    {"audio_duration_filter": {"min_duration": 0}},
    {"audio_size_filter": {}},
    {"video_duration_filter": {"min_duration": 0}},
    {"video_resolution_filter": {}},
    {"video_aspect_ratio_filter": {"min_ratio": "1/10", "max_ratio": "10/1"}},
    {"video_motion_score_filter": {"min_score": 0}},
    {"video_split_by_duration_mapper": {"split_duration": 1}},
]


def _rows(m, v):
    ok = {"images": [m["png"]], "audios": [m["tone16k"]], "videos": [v["motion"]]}
    rows = [
        {"id": 0, "text": "<__dj__image><__dj__audio><__dj__video> all good", **ok},
        {"id": 1, "text": "<__dj__image><__dj__audio><__dj__video> jpeg, stereo, with audio",
         "images": [m["rgb"]], "audios": [m["tone44k_stereo"]], "videos": [v["audio"]]},
        {"id": 2, "text": "missing image", **ok, "images": [m["missing_image"]]},
        {"id": 3, "text": "corrupt image", **ok, "images": [m["corrupt_image"]]},
        {"id": 4, "text": "truncated image", **ok, "images": [m["truncated_image"]]},
        {"id": 5, "text": "corrupt audio", **ok, "audios": [m["corrupt_audio"]]},
        {"id": 6, "text": "missing audio", **ok, "audios": [m["missing_audio"]]},
        {"id": 7, "text": "corrupt video", **ok, "videos": [v["corrupt"]]},
        {"id": 8, "text": "truncated video", **ok, "videos": [v["truncated"]]},
        {"id": 9, "text": "missing video", **ok, "videos": [v["missing"]]},
        {"id": 10, "text": "<__dj__image><__dj__audio><__dj__video> webm, flac, gif",
         "images": [m["palette"]], "audios": [m["tone8k_flac"]], "videos": [v["webm"]]},
    ]
    return rows


def _fds():
    gc.collect()
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return out


def _ledger(folder):
    entries = []
    for root, _, names in os.walk(folder):
        entries += [e for n in names if n == "errors.jsonl" for e in read_jsonl(os.path.join(root, n))]
    return entries


@pytest.mark.parametrize("fusion", [pytest.param(False, marks=pytest.mark.slow), True])  # unfused: slow target
def test_no_descriptor_left_open_by_a_media_run(make_recipe, media_files, video_files, tmp_path, fusion):  # noqa: F811
    rows = _rows(media_files, video_files)
    recipe = make_recipe(rows, PROCESS, op_fusion=fusion, keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0  # warm-up: imports, cascade, codecs
    before = _fds()
    for _ in range(2):
        assert main(["--config", recipe]) == 0
        after = _fds()
        opened = {fd: target for fd, target in after.items() if fd not in before}
        assert not opened, f"descriptors left open by the run: {opened}"
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    # the good samples were split into 1 s clips (kept original + split sample each)
    assert [r["id"] for r in out] == [0, 0, 1, 1, 10, 10]
    assert len(out[1]["videos"]) == 2 and len(out[5]["videos"]) == 1  # 2 s video -> 2 clips; 1 s WebM not cut
    ledger = _ledger(tmp_path / "out")
    assert len(ledger) >= 7 and {e["sample"]["id"] for e in ledger} == set(range(2, 10))
