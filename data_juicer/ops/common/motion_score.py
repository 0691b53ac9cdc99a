"""The base of the optical-flow motion-score filters that run a learned flow model (RAFT, ptlflow).

Frames are sampled as Data-Juicer 1.6.1's ``VideoMotionScoreFilter`` samples them: OpenCV reads
the video, keeps one frame every ``round(fps / min(sampling_fps, fps))`` frames (at least 1, at
most ``frames - 1``) by seeking, optionally resizes each (``size`` / ``max_size`` / ``divisible``),
and scores each consecutive pair of kept frames by the mean magnitude of its flow (divided by the
frame diagonal when ``relative``); a video's score is the mean over its pairs (-1 with none).
With ``frame_field`` the frames are files/bytes listed per video, sub-sampled by
``round(original_fps / min(sampling_fps, original_fps))`` when ``original_fps`` is given.

Unlike Data-Juicer, the flow model is loaded once per worker (not once per sample) and the
frame pairs of a whole batch go through it together (grouped by frame size).

Deliberate differences (Data-Juicer bugs): a resized frame has the width and height it should
have (Data-Juicer passes ``(height, width)`` to ``cv2.resize``, which wants ``(width, height)``,
so it transposes the frame's aspect); a video that cannot be opened is an error naming the file
(the sample goes to the error ledger) instead of a silent score of -1.
"""

from __future__ import annotations

import os
import sys
from typing import Literal, Optional, Union

from pydantic import PositiveFloat, PositiveInt

from data_juicer.ops.base import Filter
from data_juicer.utils.constant import Fields, MetaKeys, StatsKeys
from data_juicer.utils.lazy import require

_PAIR_BATCH = 8  # frame pairs per forward pass


def resized_dimensions(height: int, width: int, size, max_size, divisible: int) -> tuple[int, int]:
    """(height, width) after Data-Juicer's ``calculate_resized_dimensions``."""
    short, long = sorted((width, height))
    if size:
        if len(size) == 1:
            new_short, new_long = size[0], int(size[0] * long / short)
        else:
            new_short, new_long = min(size), max(size)
    else:
        new_short, new_long = short, long
    if max_size is not None and new_long > max_size:
        new_short, new_long = int(new_short * (max_size / new_long)), max_size
    dims = (new_short, new_long) if width >= height else (new_long, new_short)
    return tuple(int(d / divisible) * divisible for d in dims)


class VideoMotionScoreModelFilter(Filter):
    """Keeps samples whose videos' motion scores (stat ``video_motion_score``) are within
    [min_score, max_score]; ``flows`` is the model (one flow per frame pair)."""

    _accelerator = "cuda"
    modality = "video"
    uses_model = True

    def __init__(
        self,
        min_score: float = 1.0,
        max_score: float = sys.float_info.max,
        frame_field: Optional[str] = None,
        sampling_fps: PositiveFloat = 2,
        original_fps: Optional[PositiveFloat] = None,
        size: Union[PositiveInt, tuple[PositiveInt], tuple[PositiveInt, PositiveInt], None] = None,
        max_size: Optional[PositiveInt] = None,
        divisible: PositiveInt = 8,
        relative: bool = False,
        any_or_all: Literal["any", "all"] = "any",
        if_output_optical_flow: bool = False,
        optical_flow_key: str = MetaKeys.video_optical_flow,
        **kwargs,
    ):
        """
        :param min_score: the smallest motion score kept
        :param max_score: the largest motion score kept
        :param frame_field: a field holding, per video, the list of its frames (paths or encoded
            bytes) to use instead of decoding the videos of ``video_key``
        :param sampling_fps: frames per second sampled for the optical flow
        :param original_fps: the fps the frames of ``frame_field`` were extracted at; they are then
            sub-sampled to ``sampling_fps`` (``None``: all of them are used)
        :param size: resize frames first: an int (the short edge) or ``(h, w)``; ``None`` keeps them
        :param max_size: the longest edge allowed after resizing (with an int ``size``)
        :param divisible: frame dimensions are rounded down to a multiple of this
        :param relative: divide each flow magnitude by the frame diagonal
        :param any_or_all: keep a sample when any / all of its videos are in range
        :param if_output_optical_flow: also write each video's flows, ``(pairs, H, W, 2)``, into
            ``__dj__meta__[optical_flow_key]``
        :param optical_flow_key: the meta key of the flows
        """
        super().__init__(**kwargs)
        if any_or_all not in ("any", "all"):
            raise ValueError(f"{self.name}: Keep strategy [{any_or_all}] is not supported. "
                             "Can only be one of ['any', 'all'].")
        if isinstance(size, (list, tuple)) and len(size) not in (1, 2):
            raise ValueError(f"{self.name}: Size must be an int or a 1 or 2 element tuple/list, "
                             f"not a {len(size)} element tuple/list.")
        self.min_score = min_score
        self.max_score = max_score
        self.frame_field = frame_field
        self.sampling_fps = sampling_fps
        self.original_fps = original_fps
        self.size = (size,) if isinstance(size, int) else (tuple(size) if size else None)
        self.max_size = max_size
        self.divisible = divisible
        self.relative = relative
        self.any = any_or_all == "any"
        self.if_output_optical_flow = if_output_optical_flow
        self.optical_flow_key = optical_flow_key
        self.check_model()

    # -- the model: subclasses ------------------------------------------------------------------
    def check_model(self) -> None:
        """At construction: fail now when the model (or its code) is missing."""

    def flows(self, pairs: list) -> list:
        """``[(H, W, 2) float32 flow]`` for ``[(prev BGR uint8 frame, next BGR uint8 frame)]`` of one size."""
        raise NotImplementedError

    # -- frames --------------------------------------------------------------------------------
    def _resize(self, cv2, frame):
        if not (self.size or self.max_size):
            return frame
        h, w = frame.shape[:2]
        nh, nw = resized_dimensions(h, w, self.size, self.max_size, self.divisible)
        return frame if (nh, nw) == (h, w) else cv2.resize(frame, (nw, nh), interpolation=cv2.INTER_AREA)

    def _video_frames(self, path: str) -> list:
        cv2 = require("opencv-python-headless", who=self.name)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{self.name}: video '{path}' does not exist")
        cap = cv2.VideoCapture(path)
        try:
            if not cap.isOpened():
                raise ValueError(f"{self.name}: video '{path}' cannot be opened by OpenCV (corrupt or unsupported)")
            fps = cap.get(cv2.CAP_PROP_FPS)
            total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
            step = round(fps / min(self.sampling_fps, fps)) if fps > 0 else 1
            step = max(min(step, total - 1), 1)
            frames, pos = [], 0
            while True:
                ok, frame = cap.read()
                if not ok:
                    break
                frames.append(self._resize(cv2, frame))
                pos += step
                cap.set(cv2.CAP_PROP_POS_FRAMES, pos)
            return frames
        finally:
            cap.release()

    def _field_frames(self, frames: list) -> list:
        cv2 = require("opencv-python-headless", who=self.name)
        import numpy as np

        step = 1
        if self.original_fps is not None and self.original_fps > 0:
            step = max(round(self.original_fps / min(self.sampling_fps, self.original_fps)), 1)
        out = []
        for k, frame in enumerate(frames):
            if step > 1 and k % step:
                continue
            if isinstance(frame, (bytes, bytearray)):
                img = cv2.imdecode(np.frombuffer(frame, dtype=np.uint8), cv2.IMREAD_COLOR)
                where = f"frame {k} (bytes)"
            else:
                img = cv2.imread(frame) if os.path.isfile(frame) else None
                where = f"frame file '{frame}'"
            if img is None:
                raise ValueError(f"{self.name}: {where} is missing or cannot be decoded")
            out.append(self._resize(cv2, img))
        return out

    # -- scoring -------------------------------------------------------------------------------
    def _score_videos(self, videos: list[list]) -> tuple[list[float], list[list]]:
        """(score, flows) per video, given each video's sampled frames; the pairs of all videos
        are batched together by frame size."""
        cv2 = require("opencv-python-headless", who=self.name)
        import numpy as np

        pairs = [(v, k) for v, frames in enumerate(videos) for k in range(1, len(frames))]
        groups: dict[tuple, list] = {}
        for v, k in pairs:
            groups.setdefault(videos[v][k].shape, []).append((v, k))
        flow_of: dict[tuple, object] = {}
        for members in groups.values():
            for s in range(0, len(members), _PAIR_BATCH):
                chunk = members[s:s + _PAIR_BATCH]
                for key, flow in zip(chunk, self.flows([(videos[v][k - 1], videos[v][k]) for v, k in chunk])):
                    flow_of[key] = flow
        scores, all_flows = [], []
        for v, frames in enumerate(videos):
            vals, flows = [], []
            for k in range(1, len(frames)):
                flow = flow_of[(v, k)]
                flows.append(flow)
                mag, _ = cv2.cartToPolar(flow[..., 0], flow[..., 1])
                val = np.mean(mag)
                if self.relative:
                    val /= np.hypot(*frames[k].shape[:2])
                vals.append(float(val))
            scores.append(float(np.mean(vals or [-1])))
            all_flows.append(np.stack(flows).tolist() if flows else [])
        return scores, all_flows

    def compute_stats_batched(self, samples):
        stats = samples[Fields.stats]
        n = len(stats)
        vids = samples.get(self.video_key)
        fcol = samples.get(self.frame_field) if self.frame_field else None
        jobs = []  # (row, keys, frames per key)
        for i, s in enumerate(stats):
            if StatsKeys.video_motion_score in s:
                continue
            if fcol is not None and fcol[i] is not None:
                per_video = [self._field_frames(frames) for frames in fcol[i]]
                jobs.append((i, list(range(len(per_video))), per_video))
            elif vids is not None and vids[i]:
                keys = list(dict.fromkeys(vids[i]))
                jobs.append((i, keys, [self._video_frames(p) for p in keys]))
            else:
                s[StatsKeys.video_motion_score] = []
        if not jobs:
            return samples
        flat = [frames for _, _, per in jobs for frames in per]
        scores, flows = self._score_videos(flat)
        metas = None
        if self.if_output_optical_flow:
            metas = samples.get(Fields.meta) or [None] * n
            metas = samples[Fields.meta] = [dict(m) if m else {} for m in metas]
        pos = 0
        for i, keys, per in jobs:
            by_key = dict(zip(keys, zip(scores[pos:pos + len(per)], flows[pos:pos + len(per)])))
            pos += len(per)
            order = keys if fcol is not None and fcol[i] is not None else vids[i]
            stats[i][StatsKeys.video_motion_score] = [by_key[k][0] for k in order]
            if metas is not None:
                metas[i][self.optical_flow_key] = [by_key[k][1] for k in order]
        return samples

    def process_batched(self, samples):
        out = []
        for s in samples[Fields.stats]:
            keep = [self.get_keep_boolean(v, self.min_score, self.max_score) for v in s[StatsKeys.video_motion_score]]
            out.append(True if not keep else (any(keep) if self.any else all(keep)))
        return out
