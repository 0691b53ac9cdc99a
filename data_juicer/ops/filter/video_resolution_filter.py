import sys

from data_juicer.media.video import load_row_video_infos, row_context
from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("video_resolution_filter")
class VideoResolutionFilter(Filter):
    """Keeps samples whose videos' widths and heights (stats ``video_width``, ``video_height``:
    one value per video, from the first video stream's codec context, as Data-Juicer) are within
    [min_width, max_width] and [min_height, max_height].

    ``any``: kept when one video passes both bounds; ``all``: when every one does; a sample
    without videos is kept. Videos are probed once per sample and shared with the other video
    ops of a fused pass.
    """

    modality = "video"
    requires = ("av",)
    uses = (InterVars.loaded_videos,)

    def __init__(self, min_width: int = 1, max_width: int = sys.maxsize, min_height: int = 1,
                 max_height: int = sys.maxsize, any_or_all: str = "any", **kwargs):
        """
        :param min_width: smallest width kept, in pixels
        :param max_width: largest width kept, in pixels
        :param min_height: smallest height kept, in pixels
        :param max_height: largest height kept, in pixels
        :param any_or_all: keep a sample when ``any`` of its videos, or ``all`` of them, pass
        """
        super().__init__(**kwargs)
        if any_or_all not in ("any", "all"):
            raise ValueError(f"any_or_all must be 'any' or 'all', got {any_or_all!r}")
        self.min_width, self.max_width = min_width, max_width
        self.min_height, self.max_height = min_height, max_height
        self.any = any_or_all == "any"

    def compute_stats_batched(self, samples, context: bool = False):
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.video_width in stat and StatsKeys.video_height in stat:
                continue
            infos = load_row_video_infos(self, samples, i, row_context(samples, i) if context else None)
            paths = (samples[self.video_key][i] if self.video_key in samples else None) or []
            stat[StatsKeys.video_width] = [infos[p]["width"] for p in paths]
            stat[StatsKeys.video_height] = [infos[p]["height"] for p in paths]
        return samples

    def process_batched(self, samples):
        out = []
        for stat in samples[Fields.stats]:
            keep = [self.get_keep_boolean(w, self.min_width, self.max_width)
                    and self.get_keep_boolean(h, self.min_height, self.max_height)
                    for w, h in zip(stat[StatsKeys.video_width], stat[StatsKeys.video_height])]
            out.append(not keep or (any(keep) if self.any else all(keep)))
        return out
