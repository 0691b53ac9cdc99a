import sys

from data_juicer.media.video import load_row_video_infos, row_context
from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("video_duration_filter")
class VideoDurationFilter(Filter):
    """Keeps samples whose video durations (seconds, stat ``video_duration``: one value per
    video, in the order of ``video_key``) are within [min_duration, max_duration].

    The duration is the video stream's duration, else the container's, to 6 decimals, as
    Data-Juicer's ffmpeg backend reads it from ffprobe (the ``av`` backend's unrounded value
    differs by under 1e-6). With ``any`` a sample is kept when one of its videos is inside the
    range, with ``all`` when every one is; a sample without videos is kept (stat ``[]``).
    Videos are probed once per sample and shared with the other video ops of a fused pass.
    """

    modality = "video"
    requires = ("av",)
    uses = (InterVars.loaded_videos,)

    def __init__(self, min_duration: float = 0, max_duration: float = sys.maxsize, any_or_all: str = "any",
                 video_backend: str = "ffmpeg", **kwargs):
        """
        :param min_duration: shortest video duration kept, in seconds
        :param max_duration: longest video duration kept, in seconds
        :param any_or_all: keep a sample when ``any`` of its videos, or ``all`` of them, pass
        :param video_backend: ``ffmpeg`` or ``av`` (how Data-Juicer reads the duration; same values here)
        """
        super().__init__(**kwargs)
        if any_or_all not in ("any", "all"):
            raise ValueError(f"any_or_all must be 'any' or 'all', got {any_or_all!r}")
        if video_backend not in ("ffmpeg", "av"):
            raise ValueError(f"video_backend must be 'ffmpeg' or 'av', got {video_backend!r}")
        self.min_duration = min_duration
        self.max_duration = max_duration
        self.any = any_or_all == "any"
        self.video_backend = video_backend

    def compute_stats_batched(self, samples, context: bool = False):
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.video_duration in stat:
                continue
            infos = load_row_video_infos(self, samples, i, row_context(samples, i) if context else None)
            paths = samples[self.video_key][i] if self.video_key in samples else None
            stat[StatsKeys.video_duration] = [infos[p]["duration"] for p in paths or []]
        return samples

    def process_batched(self, samples):
        out = []
        for stat in samples[Fields.stats]:
            keep = [self.get_keep_boolean(d, self.min_duration, self.max_duration)
                    for d in stat[StatsKeys.video_duration]]
            out.append(not keep or (any(keep) if self.any else all(keep)))
        return out
