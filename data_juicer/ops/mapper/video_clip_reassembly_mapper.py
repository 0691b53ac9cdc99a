import hashlib
import os

import numpy as np

from data_juicer.media.errors import MediaError, missing_file
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.hand_video import as_array, empty_hand_result, recompute_actions, rotation
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys
from data_juicer.utils.lazy import require

SEARCH_RADIUS = 30  # frames searched around the nominal step when matching clip starts
HAWOR_PER_FRAME = ("transl", "global_orient", "hand_pose", "betas")


def blend_weight(ci: int, local: int, n_clips: int, clip_len: int, overlap_prev: int, overlap_next: int) -> float:
    """Linear cross-fade weight of frame ``local`` of clip ``ci``: ramps up over the frames shared
    with the previous clip and down over those shared with the next one."""
    w = 1.0
    if ci > 0 and overlap_prev > 0 and local < overlap_prev:
        w = (local + 1) / (overlap_prev + 1)
    if ci < n_clips - 1 and overlap_next > 0 and local >= clip_len - overlap_next:
        w = min(w, (clip_len - local) / (overlap_next + 1))
    return w


def overlaps(ci: int, offsets: list, lengths: list, n_clips: int) -> tuple:
    """Frames clip ``ci`` (of ``n_clips``) shares with the clip before and after it."""
    prev = max(0, offsets[ci - 1] + lengths[ci - 1] - offsets[ci]) if ci > 0 else 0
    nxt = max(0, offsets[ci] + lengths[ci] - offsets[ci + 1]) if ci < n_clips - 1 else 0
    return prev, nxt


def fill_gaps(items: list) -> list:
    """Nones filled as Data-Juicer fills them: a leading run by the first known item, every other
    one by the item before it (already filled)."""
    out = list(items)
    first = next((v for v in out if v is not None), None)
    for i, v in enumerate(out):
        if v is None:
            out[i] = first if i == 0 else out[i - 1]
    return out


def first_wins(per_clip: list, offsets: list) -> list:
    """Per-clip lists placed at their global offsets, the earliest clip winning a shared slot."""
    total = max((off + len(v) for off, v in zip(offsets, per_clip) if isinstance(v, list)), default=0)
    merged = [None] * total
    for off, values in zip(offsets, per_clip):
        for k, v in enumerate(values if isinstance(values, list) else []):
            if merged[off + k] is None:
                merged[off + k] = v
    return fill_gaps(merged)


@OPERATORS.register_module("video_clip_reassembly_mapper")
class VideoClipReassemblyMapper(Mapper):
    """Merges the hand-action results of the overlapping clips of one long video (e.g. cut by
    ``video_split_by_duration_mapper`` with an overlap, each clip labelled on its own) back into
    one result per video, as Data-Juicer 1.6.1 does.

    The sample's ``frame_field`` holds one list of frame image paths per clip. Each clip's global
    offset is found by matching the pixels (MD5 of the decoded image) of its first two frames
    against the previous clip's frames within 30 frames of the nominal step
    ``int((split_duration - overlap_duration) * fps)`` (or the previous clip's length), falling
    back to that step. Then:

    - ``frame_field`` becomes ``[one global frame list]`` (earliest clip wins, gaps filled by the
      nearest frame); per-frame lists of ``moge_field`` are merged the same way;
    - each clip's world frame is aligned to clip 0's from the camera poses of the shared frames
      (``c2w_prev @ inv(c2w_curr)``: median translation, mean rotation quaternion), and its
      hand states, ``joints_world`` and ``cam_c2w`` are moved into that frame;
    - hand states / joints and ``cam_c2w`` of shared frames are cross-faded with linear weights,
      and actions recomputed from the merged states;
    - HaWoR frame ids become global (first clip wins a shared frame);
    - ``clip_field`` becomes the sample's original ``video_key`` list (or its first clip).

    A sample whose ``frame_field`` is not a list of several per-clip lists is left unchanged.
    Differs from Data-Juicer on purpose: a missing or unreadable frame image raises an error
    naming it (the sample goes to the error ledger) instead of silently falling back to the
    nominal step, and a part that fails is an error, not a logged warning with the input kept.
    """

    modality = "video"
    requires = ("opencv-python-headless", "scipy")

    def __init__(self, hand_action_field: str = MetaKeys.hand_action_tags,
                 camera_pose_field: str = MetaKeys.video_camera_pose_tags,
                 hand_reconstruction_field: str = MetaKeys.hand_reconstruction_hawor_tags,
                 frame_field: str = MetaKeys.video_frames, moge_field: str = MetaKeys.camera_calibration_moge_tags,
                 clip_field: str = "clips", video_key: str = "videos", split_duration: float | None = None,
                 overlap_duration: float | None = None, fps: float | None = None, **kwargs):
        """
        :param hand_action_field: ``__dj__meta__`` field with one hand-action result per clip
            (``video_hand_action_compute_mapper``'s output)
        :param camera_pose_field: ``__dj__meta__`` field with one camera pose dict (``cam_c2w``)
            per clip
        :param hand_reconstruction_field: ``__dj__meta__`` field with one HaWoR result per clip
        :param frame_field: sample field with one list of frame image paths per clip
        :param moge_field: ``__dj__meta__`` field with one MoGe calibration dict per clip
        :param clip_field: sample field listing the clip videos; replaced by the original video
        :param video_key: sample field with the original (uncut) video path(s)
        :param split_duration: clip length in seconds the video was cut with (for the nominal step)
        :param overlap_duration: overlap in seconds between consecutive clips
        :param fps: frame rate the frames were extracted at
        """
        super().__init__(video_key=video_key, **kwargs)
        self.hand_action_field = hand_action_field
        self.camera_pose_field = camera_pose_field
        self.hand_reconstruction_field = hand_reconstruction_field
        self.frame_field = frame_field
        self.moge_field = moge_field
        self.clip_field = clip_field
        self.split_duration, self.overlap_duration, self.fps = split_duration, overlap_duration, fps

    # -- clip offsets ------------------------------------------------------------------------
    def frame_hash(self, path: str, cache: dict) -> str:
        if path not in cache:
            cv2 = require("opencv-python-headless", who=self.name)
            if not os.path.exists(path):
                raise missing_file("frame image", path)
            img = cv2.imread(path)
            if img is None:
                raise MediaError("frame image", path, "OpenCV cannot decode it")
            cache[path] = hashlib.md5(img.tobytes()).hexdigest()
        return cache[path]

    def nominal_step(self):
        if self.split_duration and self.overlap_duration and self.fps:
            return int((self.split_duration - self.overlap_duration) * self.fps)
        return None

    def clip_offsets(self, per_clip_frames: list) -> list:
        """Global offset of each clip (the first is 0)."""
        nominal, cache, offsets = self.nominal_step(), {}, [0]
        for ci in range(1, len(per_clip_frames)):
            prev, curr = per_clip_frames[ci - 1], per_clip_frames[ci]
            step = nominal or len(prev)
            found = None
            if prev and curr:
                h0 = self.frame_hash(curr[0], cache)
                for j in range(max(0, step - SEARCH_RADIUS), min(len(prev), step + SEARCH_RADIUS)):
                    if self.frame_hash(prev[j], cache) != h0:
                        continue
                    if len(curr) > 1 and j + 1 < len(prev) and \
                            self.frame_hash(curr[1], cache) != self.frame_hash(prev[j + 1], cache):
                        continue
                    found = j
                    break
            offsets.append(offsets[-1] + (step if found is None else found))
        return offsets

    # -- world-frame alignment ---------------------------------------------------------------
    @staticmethod
    def alignment_transforms(cam_poses: list, offsets: list, lengths: list) -> list:
        """4x4 transforms taking each clip's world frame to clip 0's."""
        rot = rotation()
        transforms = [np.eye(4)]
        for ci in range(1, len(cam_poses)):
            prev, curr = cam_poses[ci - 1], cam_poses[ci]
            raw_prev = prev.get("cam_c2w") if isinstance(prev, dict) else None
            raw_curr = curr.get("cam_c2w") if isinstance(curr, dict) else None
            step = offsets[ci] - offsets[ci - 1]
            shared = lengths[ci - 1] - step
            if raw_prev is None or raw_curr is None or shared <= 0:
                transforms.append(transforms[-1].copy())
                continue
            c2w_prev, c2w_curr = as_array(raw_prev, "cam_c2w"), as_array(raw_curr, "cam_c2w")
            n = max(0, min(shared, len(c2w_curr), len(c2w_prev) - step))
            if n == 0:
                transforms.append(transforms[-1].copy())
                continue
            local = c2w_prev[step:step + n] @ np.linalg.inv(c2w_curr[:n])
            quats = rot.from_matrix(local[:, :3, :3]).as_quat()
            for j in range(1, len(quats)):
                if np.dot(quats[j], quats[j - 1]) < 0:
                    quats[j] = -quats[j]
            mean = quats.mean(axis=0)
            step_t = np.eye(4)
            step_t[:3, :3] = rot.from_quat(mean / np.linalg.norm(mean)).as_matrix()
            step_t[:3, 3] = np.median(local[:, :3, 3], axis=0)
            transforms.append(transforms[ci - 1] @ step_t)
        return transforms

    @staticmethod
    def move_hand(hand: dict, T: np.ndarray) -> dict:
        """``hand``'s states and world joints moved by the rigid transform ``T``."""
        if not hand or not hand.get("states"):
            return hand
        R, t = T[:3, :3], T[:3, 3]
        states = np.asarray(hand["states"], dtype=np.float64).copy()
        states[:, 0:3] = states[:, 0:3] @ R.T + t
        rot = rotation()
        states[:, 3:6] = (rot.from_matrix(R) * rot.from_euler("xyz", states[:, 3:6])).as_euler("xyz")
        out = dict(hand, states=states.tolist(), actions=recompute_actions(states).tolist())
        jw = hand.get("joints_world")
        if jw:
            arr = np.asarray(jw, dtype=np.float64)
            out["joints_world"] = (arr.reshape(-1, 3) @ R.T + t).reshape(arr.shape).tolist()
        return out

    # -- merges ------------------------------------------------------------------------------
    @staticmethod
    def merge_moge(moge: list, offsets: list) -> dict:
        total = 0
        for off, m in zip(offsets, moge):
            if isinstance(m, dict):
                first = next((m[k] for k in ("depth", "hfov", "intrinsics", "vfov")
                              if isinstance(m.get(k), list) and m[k]), None)
                if first is not None:
                    total = max(total, off + len(first))
        if total == 0:
            return moge[0] if moge else {}
        per_frame, merged = set(), {}
        for m in moge:
            for k, v in (m.items() if isinstance(m, dict) else ()):
                if isinstance(v, list) and len(v) > 1:
                    per_frame.add(k)
                elif k not in merged:
                    merged[k] = v
        for key in per_frame:
            arr = [None] * total
            for off, m in zip(offsets, moge):
                vals = m.get(key) if isinstance(m, dict) else None
                for k, v in enumerate(vals if isinstance(vals, list) else []):
                    if off + k < total and arr[off + k] is None:
                        arr[off + k] = v
            merged[key] = fill_gaps(arr)
        return merged

    @staticmethod
    def merge_hand(per_clip: list, hand_type: str, offsets: list, lengths: list) -> dict:
        """One hand's cross-faded trajectory over all clips."""
        entries = [(ci, h) for ci, h in enumerate(per_clip) if h and h.get("states")]
        if not entries:
            return empty_hand_result(hand_type)
        if len(entries) == 1:
            ci, h = entries[0]
            return {"hand_type": hand_type, "states": h["states"], "actions": h["actions"],
                    "valid_frame_ids": [f + offsets[ci] for f in h["valid_frame_ids"]],
                    "joints_cam": h.get("joints_cam", []), "joints_world": h.get("joints_world", [])}
        gids = [f + offsets[ci] for ci, h in entries for f in h["valid_frame_ids"]]
        lo, n_total = min(gids), max(gids) - min(gids) + 1
        arrays = {k: [(np.asarray(h[k], dtype=np.float64) if h.get(k) else None) for _, h in entries]
                  for k in ("joints_world", "joints_cam")}
        sums = {k: (np.zeros((n_total, 21, 3)) if any(a is not None for a in v) else None) for k, v in arrays.items()}
        state_sum, w_sum = np.zeros((n_total, 8)), np.zeros(n_total)
        for e, (ci, h) in enumerate(entries):
            prev, nxt = overlaps(ci, offsets, lengths, len(offsets))
            states = np.asarray(h["states"], dtype=np.float64)
            for i, local in enumerate(h["valid_frame_ids"]):
                idx = local + offsets[ci] - lo
                w = blend_weight(ci, local, len(offsets), lengths[ci], prev, nxt)
                state_sum[idx] += states[i] * w
                w_sum[idx] += w
                for k, total in sums.items():
                    arr = arrays[k][e]
                    if total is not None and arr is not None and i < len(arr):
                        total[idx] += arr[i] * w
        valid = np.where(w_sum > 1e-8)[0]
        if len(valid) == 0:
            return empty_hand_result(hand_type)
        states = state_sum[valid] / w_sum[valid, None]
        joints = {k: ((v[valid] / w_sum[valid, None, None]).tolist() if v is not None else []) for k, v in sums.items()}
        return {"hand_type": hand_type, "states": states.astype(np.float32).tolist(),
                "actions": recompute_actions(states).tolist(), "valid_frame_ids": (valid + lo).tolist(),
                "joints_cam": joints["joints_cam"], "joints_world": joints["joints_world"]}

    @staticmethod
    def merge_cam_c2w(cam_poses: list, offsets: list, lengths: list) -> dict:
        arrays = [(ci, as_array(cp["cam_c2w"], "cam_c2w")) for ci, cp in enumerate(cam_poses)
                  if isinstance(cp, dict) and cp.get("cam_c2w") is not None]
        if not arrays:
            return cam_poses[0] if cam_poses else {}
        total = max(offsets[ci] + len(a) for ci, a in arrays)
        c2w, w_sum = np.zeros((total, 4, 4)), np.zeros(total)
        for ci, a in arrays:
            prev, nxt = overlaps(ci, offsets, lengths, len(cam_poses))
            for local in range(len(a)):
                w = blend_weight(ci, local, len(cam_poses), lengths[ci], prev, nxt)
                c2w[offsets[ci] + local] += a[local] * w
                w_sum[offsets[ci] + local] += w
        ok = w_sum > 1e-8
        c2w[ok] /= w_sum[ok, None, None]
        c2w[~ok] = np.eye(4)
        first = next(cp for cp in cam_poses if isinstance(cp, dict) and cp)
        return {**{k: v for k, v in first.items() if k != "cam_c2w"}, "cam_c2w": c2w.tolist()}

    @staticmethod
    def merge_hawor(hawor: list, offsets: list) -> dict:
        first = next((h for h in hawor if isinstance(h, dict) and h), {})
        merged = {k: first[k] for k in ("fov_x", "img_focal") if k in first}
        hand_types = sorted({k for h in hawor if isinstance(h, dict) for k in ("left", "right")
                             if isinstance(h.get(k), dict)})
        for ht in hand_types:
            rows, seen = [], set()
            for off, h in zip(offsets, hawor):
                hand = h.get(ht) if isinstance(h, dict) else None
                if not isinstance(hand, dict) or not hand:
                    continue
                jc = hand.get("joints_cam")
                for i, local in enumerate(hand.get("frame_ids", [])):
                    if local + off in seen:
                        continue
                    seen.add(local + off)
                    vals = {k: hand.get(k, [])[i] for k in HAWOR_PER_FRAME if i < len(hand.get(k, []))}
                    if jc is not None and i < len(jc):
                        vals["joints_cam"] = jc[i]
                    rows.append((local + off, vals))
            rows.sort(key=lambda r: r[0])
            out = {"frame_ids": [g for g, _ in rows]}
            for k in HAWOR_PER_FRAME:
                out[k] = [v[k] for _, v in rows if k in v]
            joints = [v["joints_cam"] for _, v in rows if "joints_cam" in v]
            if joints or not rows:  # as Data-Juicer: kept when some frame has joints, or no frame at all
                out["joints_cam"] = joints
            merged[ht] = out
        return merged

    # -- main ------------------------------------------------------------------------------
    def process_single(self, sample):
        meta = sample.get(Fields.meta)
        per_clip = sample.get(self.frame_field)
        if not isinstance(meta, dict) or not isinstance(per_clip, list) or len(per_clip) < 2 \
                or not isinstance(per_clip[0], list):
            return sample
        per_clip = [list(c or []) for c in per_clip]
        lengths = [len(c) for c in per_clip]
        offsets = self.clip_offsets(per_clip)
        sample[self.frame_field] = [first_wins(per_clip, offsets)]

        moge = meta.get(self.moge_field)
        if isinstance(moge, list) and len(moge) > 1:
            meta[self.moge_field] = [self.merge_moge(moge, offsets)]

        poses = meta.get(self.camera_pose_field)
        transforms = None
        if isinstance(poses, list) and len(poses) > 1:
            transforms = self.alignment_transforms(poses, offsets, lengths)

        actions = meta.get(self.hand_action_field)
        if isinstance(actions, list) and len(actions) > 1:
            actions = [dict(a) if isinstance(a, dict) else a for a in actions]
            if transforms:
                for ci in range(1, len(actions)):
                    if actions[ci] and not np.allclose(transforms[ci], np.eye(4)):
                        actions[ci] = {ht: self.move_hand(h, transforms[ci]) for ht, h in actions[ci].items()}
            hand_types = sorted({ht for a in actions if a for ht in a})
            meta[self.hand_action_field] = [{ht: self.merge_hand([a.get(ht) if a else None for a in actions],
                                                                 ht, offsets, lengths) for ht in hand_types}]

        if isinstance(poses, list) and len(poses) > 1:
            poses = list(poses)
            for ci in range(1, len(poses)):
                cp = poses[ci]
                if transforms and isinstance(cp, dict) and cp.get("cam_c2w") is not None \
                        and not np.allclose(transforms[ci], np.eye(4)):
                    moved = np.einsum("ij,njk->nik", transforms[ci], as_array(cp["cam_c2w"], "cam_c2w"))
                    poses[ci] = dict(cp, cam_c2w=moved.tolist())
            meta[self.camera_pose_field] = [self.merge_cam_c2w(poses, offsets, lengths)]

        hawor = meta.get(self.hand_reconstruction_field)
        if isinstance(hawor, list) and len(hawor) > 1:
            meta[self.hand_reconstruction_field] = [self.merge_hawor(hawor, offsets)]

        clips = sample.get(self.clip_field)
        if isinstance(clips, list) and len(clips) > 1:
            videos = sample.get(self.video_key)
            sample[self.clip_field] = videos if isinstance(videos, list) and videos else [clips[0]]
        return sample
