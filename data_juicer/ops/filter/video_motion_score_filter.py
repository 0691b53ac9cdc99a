import sys
from typing import Optional, Tuple, Union

from pydantic import PositiveFloat, PositiveInt

from data_juicer.media.video import decode_frames_by_index, frame_table, open_video, video_info
from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys, StatsKeys
from data_juicer.utils.lazy import require

_FARNEBACK = {"pyr_scale": 0.5, "levels": 3, "winsize": 15, "iterations": 3, "poly_n": 5, "poly_sigma": 1.2,
              "flags": 0}


def resized_dimensions(height: int, width: int, size, max_size: Optional[int], divisible: int) -> tuple[int, int]:
    """(height, width) after Data-Juicer's ``calculate_resized_dimensions``: ``size`` an int (the
    short edge) or (h, w); the long edge capped at ``max_size``; both made divisible."""
    short, long = sorted((width, height))
    if size:
        if len(size) == 1:
            new_short, new_long = size[0], int(size[0] * long / short)
        else:
            new_short, new_long = min(size), max(size)
    else:
        new_short, new_long = short, long
    if max_size is not None and new_long > max_size:
        new_short, new_long = int(new_short * max_size / new_long), max_size
    dims = (new_short, new_long) if width >= height else (new_long, new_short)
    return tuple(int(d / divisible) * divisible for d in dims)


def sampled_indices(n_frames: int, step: int) -> list[int]:
    """Frame positions Data-Juicer's OpenCV loop reads: the first two frames in a row (the first
    only seeds the flow), then every ``step``-th frame (so with step 1 frame 1 is read twice)."""
    if n_frames <= 0:
        return []
    idx = [0, 1] + list(range(step, n_frames, step))
    return [i for i in idx if i < n_frames]


@OPERATORS.register_module("video_motion_score_filter")
class VideoMotionScoreFilter(Filter):
    """Keeps samples whose videos' motion scores (stat ``video_motion_score``, one per video) are
    within [min_score, max_score].

    A video's score is the mean, over sampled frame pairs, of the mean magnitude of OpenCV's
    Farneback dense optical flow between consecutive sampled frames (grey, after the optional
    resize), divided by the frame diagonal when ``relative``; -1 when fewer than two frames.
    Frames are sampled as Data-Juicer's OpenCV loop samples them (``round(fps /
    min(sampling_fps, fps))`` apart, capped at frames-1, after reading the first two) but
    decoded in one forward PyAV pass (BGR, bicubic chroma as OpenCV) instead of one seek per
    sampled frame, in which the decoder skips the non-reference frames that are not sampled
    (the sampled frames come out bit-identical; ~27% less decoding on the benchmark clips), and
    the container is always closed. With ``frame_field`` the frames come from
    that field (image paths or encoded bytes per video), every ``round(original_fps /
    sampling_fps)``-th one when ``original_fps`` is given. Difference: Data-Juicer resizes with
    ``cv2.resize(frame, (h, w))`` (width and height swapped, so frames are distorted); frames
    are resized to the intended (w, h) here; scores differ only when ``size``/``max_size`` is set.
    Farneback parameters (``pyr_scale``, ``levels``, ``winsize``, ``iterations``, ``poly_n``,
    ``poly_sigma``, ``flags``) may be given as extra keyword arguments, as in Data-Juicer.
    """

    modality = "video"
    requires = ("av", "opencv-python-headless")

    def __init__(self, min_score: float = 0.25, max_score: float = sys.float_info.max,
                 frame_field: Optional[str] = None, sampling_fps: PositiveFloat = 2,
                 original_fps: Optional[PositiveFloat] = None,
                 size: Union[PositiveInt, Tuple[PositiveInt], Tuple[PositiveInt, PositiveInt], None] = None,
                 max_size: Optional[PositiveInt] = None, divisible: PositiveInt = 1, relative: bool = False,
                 any_or_all: str = "any", if_output_optical_flow: bool = False,
                 optical_flow_key: str = MetaKeys.video_optical_flow, **kwargs):
        """
        :param min_score: smallest motion score kept
        :param max_score: largest motion score kept
        :param frame_field: field holding each video's frames (paths or bytes); None: decode the videos
        :param sampling_fps: frames per second sampled for the flow
        :param original_fps: frame rate the ``frame_field`` frames were taken at (None: use them all)
        :param size: resize frames first: an int (short edge) or (h, w); None keeps the size
        :param max_size: cap on the long edge after resizing by ``size``
        :param divisible: resized dimensions are made multiples of this
        :param relative: divide each flow magnitude mean by the frame diagonal
        :param any_or_all: keep a sample when ``any`` of its videos, or ``all`` of them, pass
        :param if_output_optical_flow: also write each video's flows (num_frames, H, W, 2) into meta
        :param optical_flow_key: meta key of those flows
        """
        farneback = {k: kwargs.pop(k) for k in list(kwargs) if k in _FARNEBACK}
        super().__init__(**kwargs)
        if any_or_all not in ("any", "all"):
            raise ValueError(f"any_or_all must be 'any' or 'all', got {any_or_all!r}")
        if isinstance(size, (list, tuple)) and len(size) not in (1, 2):
            raise ValueError(f"size must be an int or a 1- or 2-element tuple, got {size!r}")
        self.min_score, self.max_score = min_score, max_score
        self.frame_field = frame_field
        self.sampling_fps, self.original_fps = sampling_fps, original_fps
        self.size = (size,) if isinstance(size, int) else (tuple(size) if size else None)
        self.max_size, self.divisible, self.relative = max_size, divisible, relative
        self.any = any_or_all == "any"
        self.if_output_optical_flow = if_output_optical_flow
        self.optical_flow_key = optical_flow_key
        self.flow_kwargs = {**_FARNEBACK, **farneback}

    # -- scoring ---------------------------------------------------------------------------
    def _score_frames(self, frames_bgr):
        cv2 = require("opencv-python-headless", who=self.name)
        import numpy as np

        scores, flows, prev = [], [], None
        for frame in frames_bgr:
            if self.size or self.max_size:
                h, w = frame.shape[:2]
                nh, nw = resized_dimensions(h, w, self.size, self.max_size, self.divisible)
                if (nh, nw) != (h, w):
                    frame = cv2.resize(frame, (nw, nh), interpolation=cv2.INTER_AREA)
            grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            if prev is None:
                prev = grey
                continue
            flow = cv2.calcOpticalFlowFarneback(prev, grey, None, **self.flow_kwargs)
            prev = grey
            if self.if_output_optical_flow:
                flows.append(flow)
            mag, _ = cv2.cartToPolar(flow[..., 0], flow[..., 1])
            score = np.mean(mag)
            if self.relative:
                score /= np.hypot(*frame.shape[:2])
            scores.append(float(score))
        flow_out = np.stack(flows).tolist() if flows else []
        return float(np.mean(scores or [-1])), flow_out

    def _video_frames(self, path):
        with open_video(path, who=self.name) as c:
            info = video_info(path, c)
            n = len(frame_table(c, path)[0])
            fps = info["fps"]
            total = info["frames"] or (int(info["duration"] * fps + 0.5) if fps else n)
            step = round(fps / min(self.sampling_fps, fps)) if fps > 0 else 1
            step = max(min(step, total - 1), 1)
            return decode_frames_by_index(
                c, sampled_indices(n, step), path=path,
                convert=lambda f: f.to_ndarray(format="bgr24", interpolation="BICUBIC"), skip_unneeded=True)

    def _field_frames(self, frames):
        cv2 = require("opencv-python-headless", who=self.name)
        import numpy as np

        step = 1
        if self.original_fps is not None and self.original_fps > 0:
            step = max(round(self.original_fps / min(self.sampling_fps, self.original_fps)), 1)
        for k, frame in enumerate(frames or []):
            if step > 1 and k % step:
                continue
            if isinstance(frame, (bytes, bytearray)):
                img = cv2.imdecode(np.frombuffer(frame, dtype=np.uint8), cv2.IMREAD_COLOR)
            else:
                img = cv2.imread(frame)
            if img is None:
                raise FileNotFoundError(f"frame {frame if isinstance(frame, str) else '<bytes>'} of "
                                        f"field '{self.frame_field}' cannot be read as an image")
            yield img

    def compute_stats_batched(self, samples, context: bool = False):
        n = len(samples[Fields.stats])
        metas = samples.get(Fields.meta) if self.if_output_optical_flow else None
        if self.if_output_optical_flow and metas is None:
            metas = samples[Fields.meta] = [{} for _ in range(n)]
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.video_motion_score in stat:
                continue
            use_field = self.frame_field and self.frame_field in samples and samples[self.frame_field][i] is not None
            paths = (samples[self.video_key][i] if self.video_key in samples else None) or []
            if use_field:
                per_video = [self._score_frames(self._field_frames(v)) for v in samples[self.frame_field][i]]
            else:
                done = {}
                for p in paths:
                    if p not in done:
                        done[p] = self._score_frames(self._video_frames(p))
                per_video = [done[p] for p in paths]
            stat[StatsKeys.video_motion_score] = [s for s, _ in per_video]
            if self.if_output_optical_flow:
                if metas[i] is None:
                    metas[i] = {}
                metas[i][self.optical_flow_key] = [f for _, f in per_video]
        return samples

    def process_batched(self, samples):
        out = []
        for stat in samples[Fields.stats]:
            keep = [self.get_keep_boolean(s, self.min_score, self.max_score)
                    for s in stat[StatsKeys.video_motion_score]]
            out.append(not keep or (any(keep) if self.any else all(keep)))
        return out
