"""The video fan-out mappers as lineage_stage expands: clips / frames as children, gathered back."""
import json

import pytest
import yaml

from data_juicer.cli.process import main
from data_juicer.ops.pipeline._lineage_fanout import FanOutStage
from tests.conftest import read_jsonl
from tests.media.video_files import video_files  # noqa: F401

pytest.importorskip("av")


def duration(path):
    """Seconds of a 10 fps test clip, from its decoded frames (independent of its metadata)."""
    import av

    with av.open(path) as c:
        return sum(1 for _ in c.decode(video=0)) / 10


def test_split_by_duration_clips_are_filtered_per_clip_and_gathered_back(tmp_path, video_files):  # noqa: F811
    rows = [{"id": 0, "text": "<__dj__video> five seconds", "videos": [video_files["long"]]},
            {"id": 1, "text": "<__dj__video> two seconds", "videos": [video_files["motion"]]},
            {"id": 2, "text": "<__dj__video> gone", "videos": [video_files["missing"]]},
            {"id": 3, "text": "no video", "videos": []}]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    clips_dir = tmp_path / "clips"
    process = [{"lineage_stage": {
        "expand": {"video_split_by_duration_mapper": {"split_duration": 2, "save_dir": str(clips_dir)}},
        "child_ops": [{"video_duration_filter": {"min_duration": 1.5}}],
        "children_key": "clips"}}]
    cfg = {"project_name": "clips", "dataset_path": str(data), "np": 1, "export_path": str(tmp_path / "o" / "r.jsonl"),
           "process": process}
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(cfg))
    assert main(["--config", str(tmp_path / "r.yaml")]) == 0
    out = read_jsonl(tmp_path / "o" / "r.jsonl")
    # 5 s -> clips [0, 2), [2, 4), [4, 5); the 1 s one fails the filter; the 2 s video is not cut
    assert [r["id"] for r in out] == [0, 1]
    assert [c.rsplit("#", 1)[1] for c in out[0]["clips"]] == ["_0.mp4", "_1.mp4"]
    assert [duration(c) for c in out[0]["clips"]] == [2.0, 2.0]
    assert out[0]["children_stats"] == [{"video_duration": [2.0]}, {"video_duration": [2.0]}]
    assert out[1]["clips"] == [video_files["motion"]] and out[1]["videos"] == [video_files["motion"]]
    assert len(list(clips_dir.glob("long__dj_hash_*_[0-9].mp4"))) == 3  # every clip was cut, one was dropped
    assert out[0]["text"] == rows[0]["text"]  # the parent is itself, not Data-Juicer's split sample
    # the missing video: its sample is in the error ledger, with the path; the run went on
    ledger = [json.loads(line) for p in tmp_path.rglob("errors.jsonl") for line in open(p)]
    assert [e["sample"]["id"] for e in ledger] == [2] and video_files["missing"] in json.dumps(ledger[0])


def test_key_frame_and_scene_splits_give_one_child_per_clip(tmp_path, video_files):  # noqa: F811
    rows = [{"id": 0, "text": "<__dj__video> a <__dj__video>", "videos": [video_files["long"], video_files["scenes"]]}]
    st = FanOutStage({"video_split_by_key_frame_mapper": {"save_dir": str(tmp_path)}}, [{"video_duration_filter": {}}],
                     children_key="clips")
    out = st.run(rows)
    # long: a key frame every second -> 5 clips; scenes: one more child
    names = [c.rsplit("/", 1)[1].rsplit("#", 1)[-1] for c in out[0]["clips"]]
    assert names[:5] == ["_0.mp4", "_1.mp4", "_2.mp4", "_3.mp4", "_4.mp4"] and len(names) == 6
    assert st.report.children == 6
    st = FanOutStage({"video_split_by_scene_mapper": {"save_dir": str(tmp_path), "min_scene_len": 3}},
                     [{"video_duration_filter": {"max_duration": 2}}], children_key="clips",
                     child_fields=["videos", "__dj__source_file__"])
    out = st.run(rows)
    # long: one scene, 5 s, filtered out; scenes: its three 1 s shots, each a child from that video
    assert st.report.children == 4 and len(out[0]["clips"]) == 3
    assert [c["__dj__source_file__"] for c in out[0]["clips"]] == [[video_files["scenes"]]] * 3
    assert [duration(c["videos"][0]) for c in out[0]["clips"]] == [1.0, 1.0, 1.0]
    assert [s["video_duration"] for s in out[0]["children_stats"]] == [[1.0], [1.0], [1.0]]


def test_extracted_frames_are_children_in_video_order(tmp_path, video_files):  # noqa: F811
    rows = [{"id": 0, "text": "<__dj__video><__dj__video>", "videos": [video_files["motion"], video_files["wide"]]},
            {"id": 1, "text": "<__dj__video>", "videos": [video_files["portrait"]]}]
    st = FanOutStage({"video_extract_frames_mapper": {"frame_sampling_method": "uniform", "frame_num": 2,
                                                      "frame_dir": str(tmp_path)}},
                     [{"image_aspect_ratio_filter": {"min_ratio": 1.0, "max_ratio": 5.0}}], children_key="frames",
                     child_fields=None)
    out = st.run(rows)
    # 2 frames per video; the portrait (48x64, ratio 0.75) frames fail the filter: sample 1 has none left
    assert st.report.children == 6 and [r["id"] for r in out] == [0]
    videos = [f.rsplit("/", 2)[1].split("__dj_hash_")[0] for f in out[0]["frames"]]
    assert videos == ["motion", "motion", "wide", "wide"]
    assert [s["aspect_ratios"] for s in out[0]["children_stats"]] == [[1.3333333333333333]] * 2 + [[4.0]] * 2
    assert "video_frames" not in out[0]
