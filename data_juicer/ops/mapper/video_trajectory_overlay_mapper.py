import os

import numpy as np

from data_juicer.media.errors import MediaError, missing_file
from data_juicer.media.files import atomic_write
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.hand_video import as_array
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys
from data_juicer.utils.lazy import require

DOT_BGR = (255, 100, 0)


def temporal_color(t: float) -> tuple:
    """BGR colour of normalised time ``t``: blue (now) -> green (middle) -> red (segment end)."""
    if t < 0.5:
        r = t / 0.5
        return int(255 * (1 - r)), int(255 * r), 0
    r = (t - 0.5) / 0.5
    return 0, int(255 * (1 - r)), int(255 * r)


def project(pos_world, cam_c2w, width: int, height: int, K=None, fov_x=None) -> np.ndarray:
    """Pixel ``(u, v)`` of a world point seen by the camera ``cam_c2w`` with intrinsics ``K``
    (or a centred pinhole of horizontal field of view ``fov_x`` radians)."""
    pos_cam = (pos_world - cam_c2w[:3, 3]) @ cam_c2w[:3, :3]
    if K is not None:
        fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
    elif fov_x is not None:
        fx = width / (2.0 * np.tan(fov_x / 2.0))
        fy, cx, cy = fx, width / 2.0, height / 2.0
    else:
        raise ValueError("either intrinsics K or fov_x is needed to project the trajectory")
    z = pos_cam[..., 2]
    z = np.where(np.abs(z) < 1e-6, 1e-6, z)
    return np.stack([fx * pos_cam[..., 0] / z + cx, fy * pos_cam[..., 1] / z + cy], axis=-1)


@OPERATORS.register_module("video_trajectory_overlay_mapper")
class VideoTrajectoryOverlayMapper(Mapper):
    """Makes VLM-ready frames of each atomic action segment, as Data-Juicer 1.6.1 does: samples
    ``n_sample_frames`` frames evenly over the segment and draws on each the palm's future path
    (its world positions from that frame to the segment's end, projected with that frame's
    camera) as an anti-aliased line fading blue -> green -> red, with a blue dot (white rim) at the
    current position, alpha-blended onto the frame; saved as JPEG.

    Reads ``__dj__meta__[segment_field]`` (``video_atomic_action_segment_mapper``'s segments;
    the palm is joint ``palm_joint_index`` of ``joints_world``, else the state's position), the
    first ``cam_c2w`` of ``camera_pose_field``, per-frame ``intrinsics`` of ``moge_field`` (else
    the median ``hfov``, else HaWoR's ``fov_x``) and the frame images of the sample's
    ``frame_field`` (one global list, or ``[list]``). Each segment gets ``overlay_frames`` (the
    written paths, ``<video stem>_seg<id>_<hand>_f<frame:06d>_overlay.jpg``) and
    ``sampled_frame_indices``. Without segments, frames, camera poses or intrinsics the sample is
    left unchanged.

    Differs from Data-Juicer on purpose: a frame image that is listed but missing or unreadable
    raises an error naming it (the sample goes to the error ledger; Data-Juicer skips the frame
    silently), files are written under a temporary name, and the input segments are not
    modified in place.
    """

    modality = "video"
    requires = ("opencv-python-headless",)

    def __init__(self, segment_field: str = "atomic_action_segments",
                 camera_pose_field: str = MetaKeys.video_camera_pose_tags,
                 moge_field: str = MetaKeys.camera_calibration_moge_tags, frame_field: str = MetaKeys.video_frames,
                 save_dir: str | None = None, n_sample_frames: int = 8, palm_joint_index: int = 9, dot_radius: int = 10,
                 line_thickness: int = 4, trajectory_alpha: float = 0.7, **kwargs):
        """
        :param segment_field: ``__dj__meta__`` field with the atomic action segments
        :param camera_pose_field: ``__dj__meta__`` field with the camera poses (``cam_c2w``)
        :param moge_field: ``__dj__meta__`` field with the MoGe calibration (per-frame
            ``intrinsics``, ``hfov``)
        :param frame_field: sample field with the frame image paths
        :param save_dir: folder of the overlay images (default: ``trajectory_overlays`` beside
            the first frame)
        :param n_sample_frames: frames sampled evenly from each segment
        :param palm_joint_index: MANO joint drawn (9: middle-finger MCP, the palm centre; 0: wrist)
        :param dot_radius: radius in pixels of the dot at the current palm position
        :param line_thickness: thickness in pixels of the trajectory line
        :param trajectory_alpha: opacity of the drawing blended onto the frame (0-1)
        """
        super().__init__(**kwargs)
        if int(n_sample_frames) < 1:
            raise ValueError(f"{self.name}: n_sample_frames must be >= 1, got {n_sample_frames}")
        if not 0.0 <= float(trajectory_alpha) <= 1.0:
            raise ValueError(f"{self.name}: trajectory_alpha must be in [0, 1], got {trajectory_alpha}")
        self.segment_field, self.camera_pose_field = segment_field, camera_pose_field
        self.moge_field, self.frame_field, self.save_dir = moge_field, frame_field, save_dir
        self.n_sample_frames, self.palm_joint_index = int(n_sample_frames), palm_joint_index
        self.dot_radius, self.line_thickness, self.trajectory_alpha = dot_radius, line_thickness, trajectory_alpha

    # -- drawing ---------------------------------------------------------------------------
    def draw(self, frame: np.ndarray, points: np.ndarray) -> np.ndarray:
        """``frame`` (BGR, changed in place) with the trajectory ``points`` drawn; point 0 is now."""
        cv2 = require("opencv-python-headless", who=self.name)
        h, w = frame.shape[:2]
        overlay = frame.copy()
        pts, idx = [], []
        for i, (u, v) in enumerate(points):
            if 0 <= u < w and 0 <= v < h:
                pts.append((int(u), int(v)))
            elif pts:  # once on screen, an off-screen point is clamped to keep the line going
                pts.append((int(np.clip(u, 0, w - 1)), int(np.clip(v, 0, h - 1))))
            else:
                continue
            idx.append(i)
        last = max(len(points) - 1, 1)
        for i in range(len(pts) - 1):
            cv2.line(overlay, pts[i], pts[i + 1], temporal_color(idx[i] / last), self.line_thickness,
                     lineType=cv2.LINE_AA)
        if len(points):
            u, v = points[0]
            if 0 <= u < w and 0 <= v < h:
                cv2.circle(overlay, (int(u), int(v)), self.dot_radius, DOT_BGR, -1, lineType=cv2.LINE_AA)
                cv2.circle(overlay, (int(u), int(v)), self.dot_radius + 1, (255, 255, 255), 1, lineType=cv2.LINE_AA)
        cv2.addWeighted(overlay, self.trajectory_alpha, frame, 1 - self.trajectory_alpha, 0, frame)
        return frame

    def read_frame(self, path: str) -> np.ndarray:
        cv2 = require("opencv-python-headless", who=self.name)
        if not os.path.exists(path):
            raise missing_file("frame image", path)
        img = cv2.imread(path)
        if img is None:
            raise MediaError("frame image", path, "OpenCV cannot decode it")
        return img

    def overlay_segment(self, seg: dict, frames: list, c2w: np.ndarray, save_dir: str, intrinsics, fov_x,
                        prefix: str) -> dict:
        cv2 = require("opencv-python-headless", who=self.name)
        seg = dict(seg)
        fids = seg["valid_frame_ids"]
        jw = seg.get("joints_world")
        palm = (np.asarray(jw, dtype=np.float64)[:, self.palm_joint_index, :] if jw
                else np.asarray(seg["states"], dtype=np.float64)[:, 0:3])
        n = len(palm)
        if n < 2:
            seg["overlay_frames"], seg["sampled_frame_indices"] = [], []
            return seg
        picks = list(range(n)) if n <= self.n_sample_frames else \
            np.linspace(0, n - 1, self.n_sample_frames, dtype=int).tolist()
        written = []
        for local in picks:
            fid = fids[local]
            if fid >= len(frames) or not frames[fid] or fid >= len(c2w):
                continue
            img = self.read_frame(frames[fid])
            h, w = img.shape[:2]
            K = np.asarray(intrinsics[fid], dtype=np.float64) if intrinsics is not None and fid < len(intrinsics) \
                else None
            points = np.array([project(p, c2w[fid], w, h, K=K, fov_x=fov_x) for p in palm[local:]])
            img = self.draw(img, points)
            name = (f"{prefix}_" if prefix else "") + f"seg{seg.get('segment_id', 0)}_{seg['hand_type']}" \
                                                       f"_f{fid:06d}_overlay.jpg"
            out = os.path.join(save_dir, name)
            with atomic_write(out) as tmp:
                if not cv2.imwrite(tmp, img):
                    raise MediaError("overlay image", out, "OpenCV could not write it")
            written.append(out)
        seg["overlay_frames"] = written
        seg["sampled_frame_indices"] = [fids[i] for i in picks if i < len(fids)]
        return seg

    # -- inputs ----------------------------------------------------------------------------
    def intrinsics(self, meta: dict) -> tuple:
        """``(per-frame K list or None, fov_x or None)``."""
        ks, fov_x = None, None
        moge = meta.get(self.moge_field) or []
        moge = moge[0] if isinstance(moge, list) and moge else moge
        if isinstance(moge, dict):
            if isinstance(moge.get("intrinsics"), list) and moge["intrinsics"]:
                ks = moge["intrinsics"]
            hfov = moge.get("hfov")
            if hfov is not None and not (isinstance(hfov, list) and not hfov):
                fov_x = float(np.median(hfov)) if isinstance(hfov, list) else float(hfov)
        if fov_x is None:
            hawor = meta.get(MetaKeys.hand_reconstruction_hawor_tags) or []
            hawor = hawor[0] if isinstance(hawor, list) and hawor else hawor
            if isinstance(hawor, dict) and hawor.get("fov_x") is not None:
                fov_x = float(hawor["fov_x"])
        return ks, fov_x

    def process_single(self, sample):
        meta = sample.get(Fields.meta)
        segments = meta.get(self.segment_field) if isinstance(meta, dict) else None
        frames = sample.get(self.frame_field) or []
        if not segments or not frames:
            return sample
        if isinstance(frames[0], list):
            frames = frames[0]
        poses = meta.get(self.camera_pose_field) or []
        pose = poses[0] if isinstance(poses, list) and poses else poses
        if not isinstance(pose, dict) or pose.get("cam_c2w") is None:
            return sample
        c2w = as_array(pose["cam_c2w"], "cam_c2w")
        ks, fov_x = self.intrinsics(meta)
        if ks is None and fov_x is None:
            return sample
        save_dir = self.save_dir or os.path.join(os.path.dirname(frames[0]), "trajectory_overlays")
        os.makedirs(save_dir, exist_ok=True)
        videos = sample.get(self.video_key) or []
        video = videos[0] if isinstance(videos, list) and videos else videos
        prefix = os.path.splitext(os.path.basename(video))[0] if video else "unknown"
        meta[self.segment_field] = [self.overlay_segment(s, frames, c2w, save_dir, ks, fov_x, prefix)
                                    for s in segments]
        return sample
