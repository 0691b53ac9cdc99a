"""video_split_by_scene_mapper on generated clips (``scenes``: red / testsrc2 / blue, 1 s each
at 10 fps, two hard cuts)."""

import os

import av
import psutil
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.media.video import video_info
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401

V, E = "<__dj__video>", "<|__dj__eoc|>"
NAME = "video_split_by_scene_mapper"


def run(rows, **kw):
    return run_ops_on_rows([OPERATORS.get(NAME)(**kw)], rows)


def frames(path):
    with av.open(path) as c:
        return sum(1 for _ in c.decode(video=0))


def rows(video_files):
    return [{"text": f"{V} a {E} b {V}", "videos": [video_files["scenes"], video_files["motion"]]},
            {"text": "nothing", "videos": []}]


@pytest.mark.parametrize("detector", ["ContentDetector", "AdaptiveDetector"])
def test_cuts_at_the_two_scene_changes(video_files, tmp_path, detector):
    out = run(rows(video_files), detector=detector, min_scene_len=5, save_dir=str(tmp_path))
    assert len(out) == 2
    assert out[0]["text"] == f"{V * 3} a {E} b {V}"
    clips = out[0]["videos"]
    assert len(clips) == 4 and clips[3] == video_files["motion"]  # one scene: left as it is
    assert [os.path.basename(p).rsplit("#_", 1)[1] for p in clips[:3]] == ["001.mp4", "002.mp4", "003.mp4"]
    assert [frames(p) for p in clips[:3]] == [10, 10, 10]
    assert [round(video_info(p)["duration"], 1) for p in clips[:3]] == [1.0, 1.0, 1.0]
    assert out[0][Fields.source_file] == [video_files["scenes"]] * 3 + [video_files["motion"]]
    assert out[1]["videos"] == [] and out[1][Fields.source_file] == [] and out[1]["text"] == "nothing"
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(p) for p in clips[:3])  # no temp left


def test_default_min_scene_len_and_threshold_detector_keep_the_video(video_files, tmp_path):
    # min_scene_len 15 frames > the 10-frame shots: no cut; ThresholdDetector sees no fade to black
    for kw in ({}, dict(detector="ThresholdDetector", threshold=12, min_scene_len=5)):
        out = run(rows(video_files)[:1], save_dir=str(tmp_path), **kw)
        assert out[0]["videos"] == [video_files["scenes"], video_files["motion"]]
        assert out[0]["text"] == f"{V} a {E} b {V}"
    assert os.listdir(tmp_path) == []


def test_rerun_same_paths_params_change_names_save_field_bytes(video_files, tmp_path):
    a = run(rows(video_files)[:1], min_scene_len=5, save_dir=str(tmp_path))[0]["videos"]
    b = run(rows(video_files)[:1], min_scene_len=5, save_dir=str(tmp_path))[0]["videos"]
    assert a == b and len(os.listdir(tmp_path)) == 3
    c = run(rows(video_files)[:1], min_scene_len=4, save_dir=str(tmp_path))[0]["videos"]
    assert not set(c[:3]) & set(a)
    out = run(rows(video_files)[:1], min_scene_len=5, save_dir=str(tmp_path), save_field="clips",
              output_format="bytes")[0]
    assert out["videos"] == [video_files["scenes"], video_files["motion"]]
    assert [len(x) for x in out["clips"]] == [os.path.getsize(p) for p in a]


def test_params_checked():
    with pytest.raises(ValueError, match="HistogramDetector"):
        OPERATORS.get(NAME)(detector="HistogramDetector")
    with pytest.raises(ValueError, match="output_format"):
        OPERATORS.get(NAME)(output_format="gif")
    op = OPERATORS.get(NAME)(detector="ContentDetector", luma_only=True)
    assert op.detector_kwargs == {"luma_only": True}


@pytest.mark.parametrize("bad", ["missing", "corrupt"])
def test_bad_video_fails_the_sample_naming_it(video_files, bad, tmp_path):
    before = psutil.Process().num_fds()
    with pytest.raises(RuntimeError, match=os.path.basename(video_files[bad])):
        run([{"text": V, "videos": [video_files[bad]]}], save_dir=str(tmp_path), skip_op_error=False)
    assert psutil.Process().num_fds() == before


def test_end_to_end_bad_videos_go_to_the_ledger(video_files, tmp_path, make_recipe):
    import json

    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    rows = [{"id": "a", "text": "<__dj__video> x", "videos": [video_files["scenes"]]},
            {"id": "gone", "text": "<__dj__video> x", "videos": [video_files["missing"]]},
            {"id": "junk", "text": "<__dj__video> x", "videos": [video_files["corrupt"]]}]
    recipe = make_recipe(rows, [{"video_split_by_scene_mapper": {"min_scene_len": 5, "save_dir": str(tmp_path / "o")}}])
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = read_jsonl(out / "result.jsonl")
    assert [r["id"] for r in res] == ["a"]
    assert res[0]["videos"][0].startswith(str(tmp_path / "o")) and len(res[0]["videos"]) == 3
    job = [os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))][0]
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert sorted(e["op"] for e in errors) == ["video_split_by_scene_mapper"] * 2
    text = json.dumps(errors)
    assert "does_not_exist.mp4" in text and "corrupt.mp4" in text
