import numpy as np

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys
from data_juicer.utils.lazy import require


def wrist_speed(positions: np.ndarray) -> np.ndarray:
    """Frame-to-frame speed, ``speed[0] = 0``."""
    if len(positions) < 2:
        return np.zeros(len(positions))
    return np.concatenate([[0.0], np.linalg.norm(np.diff(positions, axis=0), axis=1)])


def smooth_speed(speed: np.ndarray, window: int) -> np.ndarray:
    """Savitzky-Golay (order 2) smoothed speed; unchanged below 5 frames or a window under 3."""
    n = len(speed)
    win = min(window, n)
    if win % 2 == 0:
        win -= 1
    if n < 5 or win < 3:
        return speed.copy()
    require("scipy", who="video_atomic_action_segment_mapper")
    from scipy.signal import savgol_filter

    return savgol_filter(speed, win, polyorder=2)


def local_minima(speed: np.ndarray, half_window: int) -> list:
    """Frames ``t`` (not the first or last) with ``speed[t] <= min(speed[t-h : t+h+1])``."""
    n = len(speed)
    return [t for t in range(1, n - 1)
            if speed[t] <= np.min(speed[max(0, t - half_window):min(n, t + half_window + 1)])]


@OPERATORS.register_module("video_atomic_action_segment_mapper")
class VideoAtomicActionSegmentMapper(Mapper):
    """Cuts each hand's (reassembled, smoothed) world trajectory into atomic actions at minima of
    the wrist speed, as Data-Juicer 1.6.1 does (paper arXiv 2510.21571): the frame-to-frame
    speed is smoothed (Savitzky-Golay, order 2, ``speed_smooth_window``); a frame is a cut when
    its speed is the minimum within ``min_window`` frames on each side; cuts closer than
    ``min_segment_frames`` to the previous cut (or to the end) are dropped; a segment longer
    than ``max_segment_frames`` is split once at its slowest frame (when that leaves both parts
    longer than ``min_segment_frames``); segments under 2 frames are skipped.

    Reads ``__dj__meta__[hand_action_field]`` (one dict of hands per entry: ``states``,
    ``actions``, ``valid_frame_ids``, ``joints_world``, ``joints_cam``) and writes
    ``__dj__meta__[segment_field]``: a list, sorted by start frame then hand, of ``{hand_type,
    segment_id, start_frame, end_frame, states, actions, valid_frame_ids[, joints_world,
    joints_cam]}`` (frames as ``valid_frame_ids``, slices of the inputs). A hand with fewer
    than ``min_segment_frames`` states gives no segment.
    """

    modality = "video"
    requires = ("scipy",)

    def __init__(self, hand_action_field: str = MetaKeys.hand_action_tags,
                 segment_field: str = "atomic_action_segments", speed_smooth_window: int = 5,
                 min_window: int = 15, min_segment_frames: int = 8, max_segment_frames: int = 300,
                 hand_type: str = "both", **kwargs):
        """
        :param hand_action_field: ``__dj__meta__`` field with the merged hand actions
            (``video_clip_reassembly_mapper``'s output)
        :param segment_field: ``__dj__meta__`` field the segments are written to
        :param speed_smooth_window: Savitzky-Golay window over the speed before minima are found
            (odd)
        :param min_window: half-window of the local-minimum test (larger gives fewer, longer
            segments)
        :param min_segment_frames: fewest frames of a segment (closer cuts are dropped)
        :param max_segment_frames: most frames of a segment before it is split at its slowest
            frame
        :param hand_type: ``right``, ``left`` or ``both``
        """
        super().__init__(**kwargs)
        if hand_type not in ("right", "left", "both"):
            raise ValueError(f"{self.name}: hand_type must be 'right', 'left' or 'both', got {hand_type!r}")
        self.hand_action_field, self.segment_field = hand_action_field, segment_field
        self.speed_smooth_window, self.min_window = speed_smooth_window, min_window
        self.min_segment_frames, self.max_segment_frames = min_segment_frames, max_segment_frames
        self.hand_type = hand_type

    def cut_points(self, speed: np.ndarray, n: int) -> list:
        """Cut frames of a trajectory of ``n`` frames with smoothed ``speed``."""
        cuts = local_minima(speed, self.min_window)
        if cuts:
            kept = [cuts[0]]
            for c in cuts[1:]:
                if c - kept[-1] >= self.min_segment_frames:
                    kept.append(c)
            if n - kept[-1] < self.min_segment_frames and len(kept) > 1:
                kept.pop()
            cuts = kept
        bounds = [0, *cuts, n]
        out = []
        for i in range(len(bounds) - 1):
            start, end = bounds[i], bounds[i + 1]
            if i > 0:
                out.append(start)
            if end - start > self.max_segment_frames:
                mid = start + int(np.argmin(speed[start:end]))
                if mid > start + self.min_segment_frames and end - mid > self.min_segment_frames:
                    out.append(mid)
        return sorted(set(out))

    def segment_hand(self, hand: dict, hand_type: str) -> list:
        states = hand.get("states")
        if not states or len(states) < self.min_segment_frames:
            return []
        n = len(states)
        speed = smooth_speed(wrist_speed(np.asarray(states, dtype=np.float64)[:, 0:3]), self.speed_smooth_window)
        bounds = [0, *self.cut_points(speed, n), n]
        fids = hand.get("valid_frame_ids", list(range(n)))
        actions, jw, jc = hand.get("actions", []), hand.get("joints_world", []), hand.get("joints_cam", [])
        segments = []
        for k in range(len(bounds) - 1):
            s, e = bounds[k], bounds[k + 1]
            if e - s < 2:
                continue
            seg = {"hand_type": hand_type, "segment_id": k, "start_frame": fids[s] if s < len(fids) else s,
                   "end_frame": fids[e - 1] if e - 1 < len(fids) else e - 1, "states": states[s:e],
                   "actions": actions[s:e] if actions else [], "valid_frame_ids": fids[s:e]}
            if jw:
                seg["joints_world"] = jw[s:e]
            if jc:
                seg["joints_cam"] = jc[s:e]
            segments.append(seg)
        return segments

    def process_single(self, sample):
        meta = sample.get(Fields.meta)
        entries = meta.get(self.hand_action_field) if isinstance(meta, dict) else None
        if not entries:
            return sample
        hand_types = ["right", "left"] if self.hand_type == "both" else [self.hand_type]
        segments = []
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            for ht in hand_types:
                hand = entry.get(ht)
                if hand and hand.get("states"):
                    segments += self.segment_hand(hand, ht)
        segments.sort(key=lambda s: (s["start_frame"], s["hand_type"]))
        meta[self.segment_field] = segments
        return sample
