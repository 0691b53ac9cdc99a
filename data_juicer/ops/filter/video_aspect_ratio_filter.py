from fractions import Fraction

from data_juicer.media.video import load_row_video_infos, row_context
from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


def parse_ratio(value, name: str) -> Fraction:
    """``"9/21"``, ``"9:21"`` or a number as an exact fraction."""
    try:
        return Fraction(str(value).replace(":", "/"))
    except (ValueError, ZeroDivisionError) as e:
        raise ValueError(f"{name} must be a ratio like '9/21' or '9:21', got {value!r}") from e


@OPERATORS.register_module("video_aspect_ratio_filter")
class VideoAspectRatioFilter(Filter):
    """Keeps samples whose videos' aspect ratios W/H (stat ``video_aspect_ratios``: one value per
    video, from the first video stream's codec context) are within [min_ratio, max_ratio].

    ``any``: kept when one video passes; ``all``: when every one does; a sample without videos
    is kept. Videos are probed once per sample and shared with the other video ops of a fused
    pass.
    """

    modality = "video"
    requires = ("av",)
    uses = (InterVars.loaded_videos,)

    def __init__(self, min_ratio: str = "9/21", max_ratio: str = "21/9", any_or_all: str = "any", **kwargs):
        """
        :param min_ratio: smallest W/H kept, as ``"9/21"`` or ``"9:21"``
        :param max_ratio: largest W/H kept, as ``"21/9"`` or ``"21:9"``
        :param any_or_all: keep a sample when ``any`` of its videos, or ``all`` of them, pass
        """
        super().__init__(**kwargs)
        if any_or_all not in ("any", "all"):
            raise ValueError(f"any_or_all must be 'any' or 'all', got {any_or_all!r}")
        self.min_ratio = parse_ratio(min_ratio, "min_ratio")
        self.max_ratio = parse_ratio(max_ratio, "max_ratio")
        self.any = any_or_all == "any"

    def compute_stats_batched(self, samples, context: bool = False):
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.video_aspect_ratios in stat:
                continue
            infos = load_row_video_infos(self, samples, i, row_context(samples, i) if context else None)
            paths = (samples[self.video_key][i] if self.video_key in samples else None) or []
            stat[StatsKeys.video_aspect_ratios] = [infos[p]["width"] / infos[p]["height"] for p in paths]
        return samples

    def process_batched(self, samples):
        out = []
        for stat in samples[Fields.stats]:
            keep = [self.get_keep_boolean(r, self.min_ratio, self.max_ratio)
                    for r in stat[StatsKeys.video_aspect_ratios]]
            out.append(not keep or (any(keep) if self.any else all(keep)))
        return out
