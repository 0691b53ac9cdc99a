import math
from fractions import Fraction

from data_juicer.media.files import transform_file_name
from data_juicer.media.video import ffmpeg_filter, video_info
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.video_rewrite import rewrite_videos
from data_juicer.ops.filter.video_aspect_ratio_filter import parse_ratio
from data_juicer.ops.registry import OPERATORS


def rescaled_size(width: int, height: int, min_ratio: Fraction, max_ratio: Fraction, strategy: str):
    """(width, height) brought into [min_ratio, max_ratio] by growing (``increase``) or shrinking
    (``decrease``) one side, kept even; unchanged inside the range (Data-Juicer's ``rescale``)."""
    ratio = Fraction(width, height)
    w, h = width, height
    if ratio < min_ratio:
        if strategy == "increase":
            w = math.ceil(height * min_ratio)
            w += w % 2
        else:
            h = math.floor(width / min_ratio)
            h -= h % 2
    elif ratio > max_ratio:
        if strategy == "increase":
            h = math.ceil(width / max_ratio)
            h += h % 2
        else:
            w = math.floor(height * max_ratio)
            w -= w % 2
    return w, h


@OPERATORS.register_module("video_resize_aspect_ratio_mapper")
class VideoResizeAspectRatioMapper(Mapper):
    """Rescales videos whose aspect ratio W/H is outside [min_ratio, max_ratio] so that it
    lands on the nearer bound: ``increase`` grows the short side, ``decrease`` shrinks the
    long one (sides kept even). Videos inside the range are left as they are.

    The new file is written by ffmpeg's ``scale`` filter with Data-Juicer's command (only the
    video stream is kept, default encoder of the extension), named
    ``<stem>__dj_hash_#<content+params>#.<ext>`` in ``save_dir`` (stable across runs).
    """

    modality = "video"
    requires = ("av",)
    STRATEGY = ("decrease", "increase")

    def __init__(self, min_ratio: str = "9/21", max_ratio: str = "21/9", strategy: str = "increase",
                 save_dir: str = None, **kwargs):
        """
        :param min_ratio: smallest W/H, as ``"9/21"`` or ``"9:21"``
        :param max_ratio: largest W/H, as ``"21/9"`` or ``"21:9"``
        :param strategy: ``increase`` (grow a side) or ``decrease`` (shrink a side)
        :param save_dir: folder of the new videos (default: ``__dj__produced_data__`` beside the
            source, or ``$DJ_PRODUCED_DATA_DIR/<op>``)
        """
        super().__init__(**kwargs)
        strategy = str(strategy).lower()
        if strategy not in self.STRATEGY:
            raise ValueError(f"strategy must be one of {list(self.STRATEGY)}, got {strategy!r}")
        self.min_ratio = parse_ratio(min_ratio, "min_ratio")
        self.max_ratio = parse_ratio(max_ratio, "max_ratio")
        self.strategy = strategy
        self.save_dir = save_dir

    def _resize(self, path):
        info = video_info(path)
        w, h = info["width"], info["height"]
        if self.min_ratio <= Fraction(w, h) <= self.max_ratio:
            return path
        nw, nh = rescaled_size(w, h, self.min_ratio, self.max_ratio, self.strategy)
        params = dict(min_ratio=str(self.min_ratio), max_ratio=str(self.max_ratio), strategy=self.strategy)
        out = transform_file_name(path, self.name, params, out_dir=self.save_dir)
        return ffmpeg_filter(path, out, "scale", {"width": nw, "height": nh})

    def process_batched(self, samples):
        return rewrite_videos(self, samples, self._resize)
