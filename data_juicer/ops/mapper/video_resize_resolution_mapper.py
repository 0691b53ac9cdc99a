import math
import sys

from pydantic import PositiveInt

from data_juicer.media.files import transform_file_name
from data_juicer.media.video import ffmpeg_filter, video_info
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.video_rewrite import rewrite_videos
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars


@OPERATORS.register_module("video_resize_resolution_mapper")
class VideoResizeResolutionMapper(Mapper):
    """Rescales videos whose width or height is outside [min_width, max_width] x [min_height,
    max_height] into those bounds, scaling both sides by the aspect ratio, then making them
    multiples of ``force_divisible_by`` (2 when ``force_original_aspect_ratio`` is ``disable``)
    and, with ``increase``/``decrease``, restoring the original aspect ratio by growing or
    shrinking one side: Data-Juicer 1.6.1's arithmetic, step by step. Videos already inside
    are left as they are.

    The new file is written by ffmpeg's ``scale`` filter with Data-Juicer's command (only the
    video stream is kept), named ``<stem>__dj_hash_#<content+params>#.<ext>`` in ``save_dir``.
    """

    modality = "video"
    requires = ("av",)
    uses = (InterVars.loaded_videos,)

    def __init__(self, min_width: int = 1, max_width: int = sys.maxsize, min_height: int = 1,
                 max_height: int = sys.maxsize, force_original_aspect_ratio: str = "disable",
                 force_divisible_by: PositiveInt = 2, save_dir: str = None, **kwargs):
        """
        :param min_width: smallest width, in pixels
        :param max_width: largest width, in pixels
        :param min_height: smallest height, in pixels
        :param max_height: largest height, in pixels
        :param force_original_aspect_ratio: ``disable``, ``decrease`` or ``increase`` (as ffmpeg's option)
        :param force_divisible_by: sides are made multiples of this (an even number unless ``disable``)
        :param save_dir: folder of the new videos (default: ``__dj__produced_data__`` beside the
            source, or ``$DJ_PRODUCED_DATA_DIR/<op>``)
        """
        super().__init__(**kwargs)
        mode = str(force_original_aspect_ratio).lower()
        if mode not in ("disable", "decrease", "increase"):
            raise ValueError(f"force_original_aspect_ratio must be 'disable', 'decrease' or 'increase', "
                             f"got {force_original_aspect_ratio!r}")
        if (force_divisible_by <= 1 or force_divisible_by % 2 == 1) and mode != "disable":
            raise ValueError(f"force_divisible_by must be a positive even number, got {force_divisible_by}")
        self.min_width, self.max_width = min_width, max_width
        self.min_height, self.max_height = min_height, max_height
        self.force_original_aspect_ratio = mode
        self.force_divisible_by = force_divisible_by
        self.save_dir = save_dir

    def target_size(self, width: int, height: int):
        """The (width, height) a ``width`` x ``height`` video is scaled to, or None to keep it."""
        if self.min_width <= width <= self.max_width and self.min_height <= height <= self.max_height:
            return None
        ratio = width / height
        if width < self.min_width:
            height, width = self.min_width / ratio, self.min_width
        if width > self.max_width:
            height, width = self.max_width / ratio, self.max_width
        if height < self.min_height:
            width, height = self.min_height * ratio, self.min_height
        if height > self.max_height:
            width, height = self.max_height * ratio, self.max_height
        d = 2 if self.force_original_aspect_ratio == "disable" else self.force_divisible_by
        width = math.ceil(int(max(width, self.min_width)) / d) * d
        width = int(int(min(width, self.max_width)) / d) * d
        height = math.ceil(int(max(height, self.min_height)) / d) * d
        height = int(int(min(height, self.max_height)) / d) * d
        if self.force_original_aspect_ratio == "increase":
            if width / height < ratio:
                width = height * ratio
            elif width / height > ratio:
                height = width / ratio
        elif self.force_original_aspect_ratio == "decrease":
            if width / height < ratio:
                height = width / ratio
            elif width / height > ratio:
                width = height * ratio
        return int(round(width / d)) * d, int(round(height / d)) * d

    def _resize(self, path):
        info = video_info(path)
        size = self.target_size(info["width"], info["height"])
        if size is None:
            return path
        params = dict(min_width=self.min_width, max_width=self.max_width, min_height=self.min_height,
                      max_height=self.max_height, force_original_aspect_ratio=self.force_original_aspect_ratio,
                      force_divisible_by=self.force_divisible_by)
        out = transform_file_name(path, self.name, params, out_dir=self.save_dir)
        return ffmpeg_filter(path, out, "scale", {"width": size[0], "height": size[1]})

    def process_batched(self, samples):
        return rewrite_videos(self, samples, self._resize)
