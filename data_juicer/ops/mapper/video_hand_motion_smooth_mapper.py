import numpy as np
from loguru import logger

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.hand_video import (
    euler_to_quat_continuous,
    recompute_actions,
    rotation,
    savgol_columns,
    savgol_window,
)
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys

MAD_TO_SIGMA = 1.4826


def replace_outliers(positions: np.ndarray, threshold: float) -> np.ndarray:
    """A copy of ``positions`` whose jump-destination frames are linearly interpolated where the
    frame-to-frame speed exceeds ``median + threshold * 1.4826 * MAD`` (none are deleted), as
    Data-Juicer does: the destination ``i + 1`` of an outlier jump ``i`` is interpolated between
    frame ``i`` (or, when jump ``i - 1`` is an outlier too, frame ``i - 1``) and the first frame
    after it whose incoming jump is not an outlier; values already replaced are reused."""
    n = len(positions)
    result = positions.copy()
    if n < 4:
        return result
    speed = np.linalg.norm(np.diff(positions, axis=0), axis=1)
    median = np.median(speed)
    mad = np.median(np.abs(speed - median))
    if mad < 1e-8:
        return result
    outlier = speed > median + threshold * mad * MAD_TO_SIGMA
    for i in np.flatnonzero(outlier):
        target = i + 1
        prev = i - 1 if i > 0 and outlier[i - 1] else i
        nxt = target + 1
        while nxt < n and outlier[nxt - 1]:
            nxt += 1
        nxt = min(nxt, n - 1)
        if prev == target or nxt == target:
            continue
        alpha = (target - prev) / max(nxt - prev, 1)
        result[target] = (1 - alpha) * result[prev] + alpha * result[nxt]
    return result


def smooth_orientations(eulers: np.ndarray, window: int, polyorder: int) -> np.ndarray:
    """``xyz`` Euler angles smoothed as quaternions (hemisphere-continuous, Savitzky-Golay per
    component, renormalised); Euler angles unwrapped and filtered when that fails."""
    win = savgol_window(len(eulers), window, polyorder)
    if win is None:
        return eulers.copy()
    try:
        quats = savgol_columns(euler_to_quat_continuous(eulers), win, polyorder)
        quats = quats / np.clip(np.linalg.norm(quats, axis=1, keepdims=True), 1e-8, None)
        return rotation().from_quat(quats).as_euler("xyz")
    except ValueError:
        return savgol_columns(np.unwrap(eulers, axis=0), win, polyorder)


@OPERATORS.register_module("video_hand_motion_smooth_mapper")
class VideoHandMotionSmoothMapper(Mapper):
    """Smooths the world-space hand motion of ``video_hand_action_compute_mapper``'s output and
    removes outliers, as Data-Juicer 1.6.1 does, per clip and hand:

    1. frames reached by a jump faster than ``median + outlier_velocity_threshold * MAD`` (of
       the frame-to-frame wrist speed, MAD scaled to a standard deviation) are replaced by linear
       interpolation of their neighbours (no frame is removed);
    2. positions are filtered with Savitzky-Golay (``savgol_window``, ``savgol_polyorder``; the
       window shrinks to the number of frames, and no filtering happens when it gets shorter
       than ``polyorder + 2``);
    3. orientations are filtered as hemisphere-continuous quaternions and renormalised;
    4. actions are recomputed from the smoothed states; ``joints_world`` (21 joints) is
       filtered too when ``smooth_joints`` is set; ``joints_cam`` and ``valid_frame_ids`` pass
       through.

    A hand with fewer than ``min_frames_for_smoothing`` states is left as it is; a hand whose
    data cannot be smoothed (e.g. malformed states) is kept unchanged with a warning, as
    Data-Juicer does.
    """

    modality = "video"
    requires = ("scipy",)

    def __init__(self, hand_action_field: str = MetaKeys.hand_action_tags, savgol_window: int = 11,
                 savgol_polyorder: int = 3, outlier_velocity_threshold: float = 5.0,
                 min_frames_for_smoothing: int = 5, smooth_joints: bool = True, **kwargs):
        """
        :param hand_action_field: ``__dj__meta__`` field with the hand actions (one dict of
            hands per clip)
        :param savgol_window: Savitzky-Golay window length (odd; larger is smoother but blunts
            fast motions)
        :param savgol_polyorder: Savitzky-Golay polynomial order (less than the window)
        :param outlier_velocity_threshold: frames whose incoming wrist speed exceeds ``median +
            threshold * MAD`` are interpolated (higher replaces fewer)
        :param min_frames_for_smoothing: fewest states a hand needs to be smoothed
        :param smooth_joints: also smooth ``joints_world`` (the 21-joint MANO skeleton)
        """
        super().__init__(**kwargs)
        if int(savgol_polyorder) < 0 or int(savgol_window) < 1:
            raise ValueError(f"{self.name}: savgol_window must be >= 1 and savgol_polyorder >= 0, got "
                             f"{savgol_window} and {savgol_polyorder}")
        self.hand_action_field = hand_action_field
        self.savgol_window, self.savgol_polyorder = int(savgol_window), int(savgol_polyorder)
        self.outlier_velocity_threshold = outlier_velocity_threshold
        self.min_frames_for_smoothing = min_frames_for_smoothing
        self.smooth_joints = smooth_joints

    def smooth_hand(self, hand: dict) -> dict:
        states = np.asarray(hand["states"], dtype=np.float64)
        if len(states) < self.min_frames_for_smoothing:
            return hand
        win, order = self.savgol_window, self.savgol_polyorder
        out_states = np.zeros_like(states)
        out_states[:, 0:3] = savgol_columns(replace_outliers(states[:, 0:3], self.outlier_velocity_threshold),
                                            win, order)
        out_states[:, 3:6] = smooth_orientations(states[:, 3:6], win, order)
        out_states[:, 7] = states[:, 7]
        result = {"hand_type": hand["hand_type"], "states": out_states.astype(np.float32).tolist(),
                  "actions": recompute_actions(out_states).tolist(), "valid_frame_ids": hand["valid_frame_ids"]}
        joints = hand.get("joints_world")
        if self.smooth_joints and joints:
            arr = np.asarray(joints, dtype=np.float64)
            result["joints_world"] = savgol_columns(arr, win, order).tolist() if len(arr) == len(states) else joints
        else:
            result["joints_world"] = joints if joints else []
        result["joints_cam"] = hand.get("joints_cam", [])
        return result

    def process_single(self, sample):
        meta = sample.get(Fields.meta)
        clips = meta.get(self.hand_action_field) if isinstance(meta, dict) else None
        if not clips:
            return sample
        out = []
        for clip in clips:
            if not clip:
                out.append(clip)
                continue
            smoothed = {}
            for ht, hand in clip.items():
                if not hand or not hand.get("states"):
                    smoothed[ht] = hand
                    continue
                try:
                    smoothed[ht] = self.smooth_hand(hand)
                except (ValueError, IndexError, KeyError, TypeError) as e:
                    logger.warning(f"{self.name}: cannot smooth hand '{ht}' ({type(e).__name__}: {e}); kept as is")
                    smoothed[ht] = hand
            out.append(smoothed)
        meta[self.hand_action_field] = out
        return sample
