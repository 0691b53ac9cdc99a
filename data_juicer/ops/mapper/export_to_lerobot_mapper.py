import hashlib
import json
import os
import shutil
import subprocess

import numpy as np

from data_juicer.media.errors import MediaError, missing_file
from data_juicer.media.files import atomic_write, file_digest
from data_juicer.media.video import VideoError, check_video_path, open_video
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys
from data_juicer.utils.lazy import require

DEFAULT_CHUNKS_SIZE = 1000
EXPORT_KEY = "lerobot_export"
VIDEO_KEY = "observation.images.image"
_AXES = ("x", "y", "z", "roll", "pitch", "yaw")
MODALITY = {
    "state": {k: {"start": i, "end": i + 1} for i, k in enumerate((*_AXES, "pad", "gripper"))},
    "action": {k: {"start": i, "end": i + 1} for i, k in enumerate((*_AXES, "gripper"))},
    "video": {"primary_image": {"original_key": VIDEO_KEY}},
    "annotation": {"human.action.task_description": {"original_key": "task_index"}},
}


def _scalar(dtype: str) -> dict:
    return {"dtype": dtype, "shape": [1], "names": None}


def _write_text(path: str, text: str):
    with atomic_write(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(text)


def probe_video(path: str) -> dict:
    """Width, height, channels, codec and pixel format of a video, as Data-Juicer's info.json
    gives them (channels from the pixel format: ``gray*`` 1, one with alpha 4, else 3)."""
    with open_video(path) as c:
        cc = c.streams.video[0].codec_context
        pix = cc.pix_fmt or "yuv420p"
        channels = 1 if "gray" in pix else 4 if "a" in pix and pix not in ("yuv420p", "yuvj420p") else 3
        return {"width": int(cc.width), "height": int(cc.height), "channels": channels, "codec": cc.name,
                "pix_fmt": pix}


@OPERATORS.register_module("export_to_lerobot_mapper")
class ExportToLeRobotMapper(Mapper):
    """Writes hand-action samples as episodes of a LeRobot v2.0 dataset (LIBERO / StarVLA style),
    as Data-Juicer 1.6.1 does, in two steps so that parallel workers never coordinate:

    1. the op stages each episode under ``<output_dir>/staging/``: ``data/<id>.parquet`` (one row
       per frame: ``observation.state`` (8), ``action`` (7), ``timestamp`` = frame / fps,
       ``frame_index``, placeholder ``episode_index`` / ``index`` / ``task_index``,
       ``next.done``), ``videos/<id>.mp4`` and ``meta/<id>.jsonl`` (length, task), and records
       them in ``__dj__meta__.lerobot_export``;
    2. ``ExportToLeRobotMapper.finalize_dataset(output_dir, fps, robot_type, chunks_size)``, run
       once after the job, numbers the episodes (sorted by id) and writes
       ``data/chunk-NNN/episode_XXXXXX.parquet``, ``videos/chunk-NNN/observation.images.image/
       episode_XXXXXX.mp4`` and ``meta/{info.json, episodes.jsonl, tasks.jsonl, modality.json}``.

    Whole-video mode (``segment_field`` None): each entry of ``hand_action_field`` (a flat
    ``{states, actions, valid_frame_ids}`` or one per hand, the right one first) with at least 2
    states is an episode; its video is the sample's video (path or bytes) copied; the task is the
    sample's text (else ``manipulate object``). Segment mode: each segment of ``segment_field``
    is an episode whose task is its caption's ``action`` (``N/A`` skips it; empty gives
    ``<hand> hand action``) and whose video is encoded (H.264, ``fps``) from the frame images of
    ``frame_field`` between its start and end frame; missing actions become zeros.

    Differs from Data-Juicer on purpose: episode ids are derived from the episode's content (a
    rerun gives the same files and the same episode order; Data-Juicer draws random UUIDs, so
    two identical episodes are one here); a frame image or video that is listed but missing or
    unreadable raises an error naming it (the sample goes to the error ledger; Data-Juicer skips
    frames silently); ``finalize_dataset`` also works when no episode has a video (video shape
    0 x 0), where Data-Juicer raises after writing half the metadata.
    """

    modality = "video"
    requires = ("pyarrow", "opencv-python-headless", "av")

    def __init__(self, output_dir: str = "./lerobot_output", hand_action_field: str = "hand_action_tags",
                 fps: int = 10, robot_type: str = "egodex_hand", chunks_size: int = DEFAULT_CHUNKS_SIZE,
                 segment_field: str | None = None, frame_field: str = MetaKeys.video_frames, **kwargs):
        """
        :param output_dir: root folder of the LeRobot dataset
        :param hand_action_field: ``__dj__meta__`` field with the states / actions (whole-video
            mode, ``segment_field`` None)
        :param fps: frame rate of the dataset (timestamps, encoded segment videos, info.json)
        :param robot_type: ``robot_type`` written to info.json
        :param chunks_size: episodes per ``chunk-NNN`` folder
        :param segment_field: ``__dj__meta__`` field with atomic action segments; when set, each
            segment is an episode with its caption as task
        :param frame_field: sample field with the frame image paths (segment mode)
        """
        super().__init__(**kwargs)
        if int(fps) <= 0 or int(chunks_size) <= 0:
            raise ValueError(f"{self.name}: fps and chunks_size must be positive, got {fps} and {chunks_size}")
        self.output_dir, self.hand_action_field, self.fps = output_dir, hand_action_field, fps
        self.robot_type, self.chunks_size = robot_type, int(chunks_size)
        self.segment_field, self.frame_field = segment_field, frame_field
        self.staging = os.path.join(output_dir, "staging")

    # -- staging ---------------------------------------------------------------------------
    def _dir(self, kind: str) -> str:
        path = os.path.join(self.staging, kind)
        os.makedirs(path, exist_ok=True)
        return path

    def stage_parquet(self, states, actions, ep_id: str, frame_ids=None) -> tuple:
        pa = require("pyarrow", who=self.name)
        pq = require("pyarrow.parquet", who=self.name)
        n = len(states)
        ids = [int(frame_ids[t]) if frame_ids else t for t in range(n)]
        table = pa.table({
            "observation.state": pa.array(np.asarray(states, dtype=np.float32).astype(np.float64).tolist(),
                                          pa.list_(pa.float64())),
            "action": pa.array(np.asarray(actions, dtype=np.float32).astype(np.float64).tolist(),
                               pa.list_(pa.float64())),
            "timestamp": pa.array([float(f) / self.fps for f in ids], pa.float64()),
            "frame_index": pa.array(ids, pa.int64()),
            "episode_index": pa.array([0] * n, pa.int64()),
            "index": pa.array(list(range(n)), pa.int64()),
            "task_index": pa.array([0] * n, pa.int64()),
            "next.done": pa.array([t == n - 1 for t in range(n)], pa.bool_()),
        })
        path = os.path.join(self._dir("data"), f"{ep_id}.parquet")
        with atomic_write(path) as tmp:
            pq.write_table(table, tmp)
        return path, n

    def stage_meta(self, ep_id: str, length: int, task: str, video_path):
        ext = (os.path.splitext(video_path)[1] or ".mp4") if isinstance(video_path, str) else ".mp4"
        entry = {"uuid": ep_id, "length": length, "task": task, "video_ext": ext}
        _write_text(os.path.join(self._dir("meta"), f"{ep_id}.jsonl"), json.dumps(entry, ensure_ascii=False) + "\n")

    def stage_video(self, source, ep_id: str) -> str:
        if isinstance(source, (bytes, bytearray)):
            dst = os.path.join(self._dir("videos"), f"{ep_id}.mp4")
            if not os.path.exists(dst):
                with atomic_write(dst) as tmp, open(tmp, "wb") as f:
                    f.write(source)
            return dst
        source = check_video_path(source)
        dst = os.path.join(self._dir("videos"), f"{ep_id}{os.path.splitext(source)[1] or '.mp4'}")
        if not os.path.exists(dst):
            with atomic_write(dst) as tmp:
                shutil.copy2(source, tmp)
        return dst

    def encode_frames(self, paths: list, out_path: str) -> str:
        """H.264 MP4 of the frame images ``paths`` (resized to the first one's size), as Data-Juicer
        encodes a segment: ``libx264 -preset fast -crf 23 -pix_fmt yuv420p`` at ``fps``."""
        cv2 = require("opencv-python-headless", who=self.name)
        imgs = []
        for p in paths:
            if not os.path.exists(p):
                raise missing_file("frame image", p)
            img = cv2.imread(p)
            if img is None:
                raise MediaError("frame image", p, "OpenCV cannot decode it")
            if imgs and img.shape[:2] != imgs[0].shape[:2]:
                img = cv2.resize(img, (imgs[0].shape[1], imgs[0].shape[0]))
            imgs.append(img)
        h, w = imgs[0].shape[:2]
        with atomic_write(out_path) as tmp:
            cmd = ["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-f", "rawvideo", "-vcodec", "rawvideo",
                   "-pix_fmt", "bgr24", "-s", f"{w}x{h}", "-r", str(self.fps), "-i", "-", "-c:v", "libx264",
                   "-pix_fmt", "yuv420p", "-preset", "fast", "-crf", "23", "-movflags", "frag_keyframe+empty_moov",
                   "-f", "mp4", tmp]
            res = subprocess.run(cmd, input=b"".join(i.tobytes() for i in imgs), capture_output=True, check=False)
            if res.returncode != 0:
                raise VideoError(f"ffmpeg failed encoding '{out_path}': "
                                 f"{res.stderr.decode(errors='replace').strip()[-400:]}", out_path)
        return out_path

    @staticmethod
    def episode_id(*parts) -> str:
        return hashlib.md5(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()

    # -- modes -----------------------------------------------------------------------------
    def frame_paths(self, sample: dict) -> list:
        frames = sample.get(self.frame_field) or (sample.get(Fields.meta) or {}).get(self.frame_field) or []
        return frames[0] if isinstance(frames, list) and frames and isinstance(frames[0], list) else frames

    def export_segments(self, sample: dict) -> list:
        frames = self.frame_paths(sample)
        done = []
        for seg in sample[Fields.meta].get(self.segment_field) or []:
            states, actions = seg.get("states") or [], seg.get("actions") or []
            if len(states) < 2:
                continue
            if len(actions) < len(states):
                actions = [[0.0] * 7] * len(states)
            caption = seg.get("caption") or {}
            task = caption.get("action", "") if isinstance(caption, dict) else str(caption)
            if task == "N/A":
                continue
            task = task or f"{seg.get('hand_type', 'hand')} hand action"
            start = seg.get("start_frame", 0)
            end = seg.get("end_frame", len(frames) - 1)
            fids = seg.get("valid_frame_ids", list(range(start, end + 1)))
            clip = [frames[f] for f in range(start, min(end + 1, len(frames))) if frames[f]]
            ep_id = self.episode_id("segment", states, actions, fids, task, clip,
                                    [file_digest(p) if os.path.exists(p) else p for p in clip])
            parquet, n = self.stage_parquet(states, actions, ep_id, [f - start for f in fids])
            video = None
            if clip:
                video = os.path.join(self._dir("videos"), f"{ep_id}.mp4")
                if not os.path.exists(video):
                    self.encode_frames(clip, video)
            self.stage_meta(ep_id, n, task, video)
            done.append({"uuid": ep_id, "parquet_path": parquet, "video_path": video, "num_frames": n,
                         "segment_id": seg.get("segment_id", -1), "hand_type": seg.get("hand_type", "unknown")})
        return done

    def export_whole_videos(self, sample: dict) -> list:
        task = sample.get(self.text_key) or "manipulate object"
        sources = sample.get(self.video_key) or []
        done = []
        for i, entry in enumerate(sample[Fields.meta].get(self.hand_action_field) or []):
            entry = entry or {}
            data = entry if "states" in entry else next(
                (entry[ht] for ht in ("right", "left") if (entry.get(ht) or {}).get("states")), {})
            states, actions = data.get("states") or [], data.get("actions") or []
            if len(states) < 2:
                continue
            fids = data.get("valid_frame_ids")
            src = sources[i] if i < len(sources) else None
            if isinstance(src, (bytes, bytearray)):
                src_key = hashlib.md5(src).hexdigest()
            else:
                src_key = file_digest(check_video_path(src)) if src is not None else None
            ep_id = self.episode_id("video", states, actions, fids, task, src_key)
            parquet, n = self.stage_parquet(states, actions, ep_id, fids)
            video = self.stage_video(src, ep_id) if src is not None else None
            self.stage_meta(ep_id, n, task, video)
            done.append({"uuid": ep_id, "parquet_path": parquet, "video_path": video, "num_frames": n})
        return done

    def process_single(self, sample):
        meta = sample.get(Fields.meta)
        if not isinstance(meta, dict):
            return sample
        if self.segment_field:
            meta[EXPORT_KEY] = self.export_segments(sample)
        elif meta.get(self.hand_action_field):
            meta[EXPORT_KEY] = self.export_whole_videos(sample)
        return sample

    # -- finalize --------------------------------------------------------------------------
    @staticmethod
    def finalize_dataset(output_dir, fps=10, robot_type="egodex_hand", chunks_size=DEFAULT_CHUNKS_SIZE) -> dict:
        """Turn ``<output_dir>/staging`` into the final LeRobot v2.0 layout (run once, after all
        workers finished); returns the info.json dict, or None when nothing was staged."""
        pq = require("pyarrow.parquet", who="export_to_lerobot_mapper")
        pa = require("pyarrow", who="export_to_lerobot_mapper")
        staging = os.path.join(output_dir, "staging")
        meta_dir = os.path.join(output_dir, "meta")
        os.makedirs(meta_dir, exist_ok=True)
        _write_text(os.path.join(meta_dir, "modality.json"), json.dumps(MODALITY, indent=4))
        episodes = []
        staged_meta = os.path.join(staging, "meta")
        for name in sorted(os.listdir(staged_meta)) if os.path.isdir(staged_meta) else []:
            if name.endswith(".jsonl"):
                with open(os.path.join(staged_meta, name), encoding="utf-8") as f:
                    episodes += [json.loads(line) for line in f if line.strip()]
        if not episodes:
            return None
        episodes.sort(key=lambda e: e["uuid"])
        tasks, offset = {}, 0
        for i, ep in enumerate(episodes):
            ep["episode_index"], ep["offset"] = i, offset
            offset += ep["length"]
            ep["task_index"] = tasks.setdefault(ep["task"], len(tasks))
        n_chunks = max(1, -(-len(episodes) // chunks_size))
        first_video, n_videos = None, 0
        for ep in episodes:
            chunk = f"chunk-{ep['episode_index'] // chunks_size:03d}"
            src = os.path.join(staging, "data", f"{ep['uuid']}.parquet")
            if os.path.exists(src):
                table = pq.read_table(src)
                n = table.num_rows
                frame_index = table.column("frame_index").to_numpy()
                for col, values in (("episode_index", [ep["episode_index"]] * n),
                                    ("index", (ep["offset"] + frame_index).tolist()),
                                    ("task_index", [ep["task_index"]] * n)):
                    table = table.set_column(table.schema.get_field_index(col), col, pa.array(values, pa.int64()))
                dst = os.path.join(output_dir, "data", chunk, f"episode_{ep['episode_index']:06d}.parquet")
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                with atomic_write(dst) as tmp:
                    pq.write_table(table, tmp)
            ext = ep.get("video_ext", ".mp4")
            src = os.path.join(staging, "videos", f"{ep['uuid']}{ext}")
            if os.path.exists(src):
                dst = os.path.join(output_dir, "videos", chunk, VIDEO_KEY, f"episode_{ep['episode_index']:06d}{ext}")
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.move(src, dst)
                first_video = first_video or dst
                n_videos += 1
        _write_text(os.path.join(meta_dir, "episodes.jsonl"), "".join(
            json.dumps({"episode_index": e["episode_index"], "length": e["length"], "task": e["task"]},
                       ensure_ascii=False) + "\n" for e in episodes))
        _write_text(os.path.join(meta_dir, "tasks.jsonl"), "".join(
            json.dumps({"task_index": i, "task": t}, ensure_ascii=False) + "\n" for t, i in tasks.items()))
        video = probe_video(first_video) if first_video else \
            {"width": 0, "height": 0, "channels": 3, "codec": "av1", "pix_fmt": "yuv420p"}
        info = {
            "codebase_version": "v2.0", "robot_type": robot_type, "total_episodes": len(episodes),
            "total_frames": offset, "total_tasks": len(tasks), "total_videos": n_videos, "total_chunks": n_chunks,
            "chunks_size": chunks_size, "fps": fps, "splits": {"train": f"0:{len(episodes)}"},
            "data_path": "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
            "video_path": "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4",
            "features": {
                "observation.state": {"dtype": "float32", "shape": [8]},
                "action": {"dtype": "float32", "shape": [7]},
                VIDEO_KEY: {
                    "dtype": "video", "shape": [video["height"], video["width"], video["channels"]],
                    "names": ["height", "width", "channels"],
                    "info": {"video.height": video["height"], "video.width": video["width"],
                             "video.channels": video["channels"], "video.codec": video["codec"],
                             "video.pix_fmt": video["pix_fmt"], "video.is_depth_map": False, "video.fps": fps,
                             "has_audio": False}},
                "timestamp": _scalar("float32"), "frame_index": _scalar("int64"),
                "episode_index": _scalar("int64"), "index": _scalar("int64"), "task_index": _scalar("int64"),
            },
        }
        _write_text(os.path.join(meta_dir, "info.json"), json.dumps(info, indent=2, ensure_ascii=False))
        shutil.rmtree(staging, ignore_errors=True)
        return info
