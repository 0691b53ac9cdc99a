"""export_to_lerobot_mapper: staged episodes and the final LeRobot v2.0 folder, from literal
states/actions, the testsrc2 clips of tests/media/video_files.py and small PNG frames."""

import json
import os

import av
import numpy as np
import pyarrow.parquet as pq
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.conftest import read_jsonl
from tests.media.video_files import video_files  # noqa: F401

NAME = "export_to_lerobot_mapper"
OP = OPERATORS.get(NAME)


def make(tmp_path, **kw):
    return OPERATORS.get(NAME)(output_dir=str(tmp_path / "lerobot"), **kw)


def states(n, x0=0.0):
    return [[x0 + 0.5 * t, 0.25, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0 if t % 2 else -1.0] for t in range(n)]


def actions(n):
    return [[0.5, 0, 0, 0, 0, 0, 1.0] for _ in range(n)]


def hand(n, x0=0.0, fids=None):
    return {"states": states(n, x0), "actions": actions(n), "valid_frame_ids": fids or list(range(n))}


def tree(root):
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(out)


def n_frames(path):
    with av.open(path) as c:
        return sum(1 for _ in c.decode(video=0))


def test_whole_video_episodes_and_final_layout(video_files, tmp_path):
    op = make(tmp_path, fps=10)
    rows = [{"text": "pick the cup", "videos": [video_files["motion"]],
             Fields.meta: {"hand_action_tags": [{"right": hand(4, fids=[2, 3, 5, 6]), "left": hand(3, 9.0)}]}},
            {"text": "", "videos": [video_files["long"]],
             Fields.meta: {"hand_action_tags": [{"right": {"states": []}, "left": hand(5, 1.0)}]}},
            {"text": "too short", "videos": [video_files["motion"]],
             Fields.meta: {"hand_action_tags": [{"right": hand(1)}]}},
            {"text": "nothing", Fields.meta: {}}]
    out = run_ops_on_rows([op], rows)
    exp = [r[Fields.meta].get("lerobot_export") for r in out]
    assert [len(e) for e in exp[:3]] == [1, 1, 0] and exp[3] is None
    assert exp[0][0]["num_frames"] == 4 and exp[1][0]["num_frames"] == 5
    staged = tree(tmp_path / "lerobot" / "staging")
    ids = sorted(e[0]["uuid"] for e in exp[:2])
    assert staged == sorted([f"data/{i}.parquet" for i in ids] + [f"meta/{i}.jsonl" for i in ids]
                            + [f"videos/{i}.mp4" for i in ids])

    info = OP.finalize_dataset(str(tmp_path / "lerobot"), fps=10, robot_type="egodex_hand")
    root = tmp_path / "lerobot"
    assert tree(root) == ["data/chunk-000/episode_000000.parquet", "data/chunk-000/episode_000001.parquet",
                          "meta/episodes.jsonl", "meta/info.json", "meta/modality.json", "meta/tasks.jsonl",
                          "videos/chunk-000/observation.images.image/episode_000000.mp4",
                          "videos/chunk-000/observation.images.image/episode_000001.mp4"]
    assert info == json.loads((root / "meta" / "info.json").read_text())
    assert (info["total_episodes"], info["total_frames"], info["total_tasks"], info["total_videos"],
            info["total_chunks"], info["splits"]) == (2, 9, 2, 2, 1, {"train": "0:2"})
    assert info["features"]["observation.images.image"]["shape"] == [48, 64, 3]
    assert info["features"]["observation.images.image"]["info"]["video.codec"] == "h264"
    episodes = read_jsonl(root / "meta" / "episodes.jsonl")
    by_task = {e["task"]: e for e in episodes}
    assert sorted(by_task) == ["manipulate object", "pick the cup"]
    assert (by_task["pick the cup"]["length"], by_task["manipulate object"]["length"]) == (4, 5)
    assert sorted(e["episode_index"] for e in episodes) == [0, 1]

    cup = by_task["pick the cup"]["episode_index"]
    table = pq.read_table(root / "data" / "chunk-000" / f"episode_{cup:06d}.parquet").to_pydict()
    assert table["frame_index"] == [2, 3, 5, 6]
    assert table["timestamp"] == [0.2, 0.3, 0.5, 0.6]
    assert table["next.done"] == [False, False, False, True]
    assert table["observation.state"][1] == [0.5, 0.25, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    assert table["action"][0] == [0.5, 0, 0, 0, 0, 0, 1.0]
    assert set(table["episode_index"]) == {cup} and len(set(table["task_index"])) == 1
    offset = 0 if cup == 0 else 5
    assert table["index"] == [offset + f for f in (2, 3, 5, 6)]
    video = root / "videos" / "chunk-000" / "observation.images.image" / f"episode_{cup:06d}.mp4"
    with open(video_files["motion"], "rb") as f:
        assert video.read_bytes() == f.read()
    modality = json.loads((root / "meta" / "modality.json").read_text())
    assert modality["state"]["gripper"] == {"start": 7, "end": 8} and modality["action"]["gripper"]["end"] == 7


def test_segment_episodes_encode_their_frames(tmp_path):
    cv2 = pytest.importorskip("cv2")
    frames = []
    for f in range(12):
        frames.append(str(tmp_path / f"f{f:02d}.png"))
        cv2.imwrite(frames[-1], np.full((32, 48, 3), 20 * f, np.uint8))
    segs = [{"hand_type": "right", "segment_id": 0, "start_frame": 2, "end_frame": 6, "states": states(5),
             "actions": actions(5), "valid_frame_ids": [2, 3, 4, 5, 6], "caption": {"action": "open the lid"}},
            {"hand_type": "left", "segment_id": 1, "start_frame": 7, "end_frame": 11, "states": states(4),
             "valid_frame_ids": [7, 8, 10, 11]},
            {"hand_type": "left", "segment_id": 2, "start_frame": 0, "end_frame": 3, "states": states(4),
             "caption": {"action": "N/A"}},
            {"hand_type": "right", "segment_id": 3, "start_frame": 0, "end_frame": 1, "states": states(1)}]
    op = make(tmp_path, segment_field="atomic_action_segments", fps=5, chunks_size=1)
    out = run_ops_on_rows([op], [{"video_frames": [frames], Fields.meta: {"atomic_action_segments": segs}}])[0]
    exp = out[Fields.meta]["lerobot_export"]
    assert [(e["segment_id"], e["hand_type"], e["num_frames"]) for e in exp] == [(0, "right", 5), (1, "left", 4)]
    assert [n_frames(e["video_path"]) for e in exp] == [5, 5]
    info = OP.finalize_dataset(str(tmp_path / "lerobot"), fps=5, chunks_size=1)
    assert (info["total_episodes"], info["total_chunks"], info["total_frames"]) == (2, 2, 9)
    assert info["features"]["observation.images.image"]["shape"] == [32, 48, 3]
    root = tmp_path / "lerobot"
    tasks = {t["task"] for t in read_jsonl(root / "meta" / "tasks.jsonl")}
    assert tasks == {"open the lid", "left hand action"}
    eps = {e["task"]: e["episode_index"] for e in read_jsonl(root / "meta" / "episodes.jsonl")}
    left = pq.read_table(root / "data" / f"chunk-{eps['left hand action']:03d}"
                         / f"episode_{eps['left hand action']:06d}.parquet").to_pydict()
    assert left["frame_index"] == [0, 1, 3, 4]  # relative to the segment's start frame
    assert left["action"] == [[0.0] * 7] * 4  # no actions: zeros
    assert left["timestamp"] == [0.0, 0.2, 0.6, 0.8]


def test_rerun_gives_the_same_episode_files(video_files, tmp_path):
    row = {"text": "t", "videos": [video_files["motion"]], Fields.meta: {"hand_action_tags": [hand(3)]}}
    a = run_ops_on_rows([make(tmp_path)], [row])[0][Fields.meta]["lerobot_export"]
    b = run_ops_on_rows([make(tmp_path)], [row])[0][Fields.meta]["lerobot_export"]
    assert a == b and len(tree(tmp_path / "lerobot" / "staging")) == 3


def test_params_empty_finalize_and_bad_media(video_files, tmp_path):
    with pytest.raises(ValueError, match="fps"):
        make(tmp_path, fps=0)
    assert OP.finalize_dataset(str(tmp_path / "empty")) is None
    assert tree(tmp_path / "empty") == ["meta/modality.json"]
    # whole-video mode copies the video as it is (as Data-Juicer): only a missing one is an error
    row = {"text": "t", "videos": [video_files["missing"]], Fields.meta: {"hand_action_tags": [hand(3)]}}
    with pytest.raises(RuntimeError, match="does_not_exist.mp4"):
        run_ops_on_rows([make(tmp_path, skip_op_error=False)], [row])
    row = {"video_frames": [str(tmp_path / "gone.png")] * 3,
           Fields.meta: {"seg": [{"start_frame": 0, "end_frame": 2, "states": states(3)}]}}
    with pytest.raises(RuntimeError, match="gone.png"):
        run_ops_on_rows([make(tmp_path, segment_field="seg", skip_op_error=False)], [row])
