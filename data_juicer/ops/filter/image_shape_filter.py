import sys

from data_juicer.media.image import load_row_images
from data_juicer.ops.base import Filter
from data_juicer.ops.common.media import check_any_or_all, keep_by_strategy
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("image_shape_filter")
class ImageShapeFilter(Filter):
    """Keeps samples whose images' widths and heights (stats ``image_width``, ``image_height``,
    one per image in order, in pixels after EXIF rotation) are inside the bounds; ``any_or_all``
    decides over several images. A sample without images is kept. Same as Data-Juicer 1.6.1.
    """

    modality = "image"
    uses = (InterVars.loaded_images,)
    requires = ("pillow",)

    def __init__(self, min_width: int = 1, max_width: int = sys.maxsize, min_height: int = 1,
                 max_height: int = sys.maxsize, any_or_all: str = "any", **kwargs):
        """
        :param min_width: smallest width kept, in pixels
        :param max_width: largest width kept, in pixels
        :param min_height: smallest height kept, in pixels
        :param max_height: largest height kept, in pixels
        :param any_or_all: keep a sample when ``any`` of its images fits, or only when ``all`` do
        """
        super().__init__(**kwargs)
        self.min_width, self.max_width = min_width, max_width
        self.min_height, self.max_height = min_height, max_height
        self.any = check_any_or_all(any_or_all, self.name)

    def compute_stats_batched(self, samples, context=False):
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.image_width in stat and StatsKeys.image_height in stat:
                continue
            paths = samples[self.image_key][i] if self.image_key in samples else None
            if not paths:
                stat[StatsKeys.image_width], stat[StatsKeys.image_height] = [], []
                continue
            images = load_row_images(self, samples, i)
            stat[StatsKeys.image_width] = [images[p].width for p in paths]
            stat[StatsKeys.image_height] = [images[p].height for p in paths]
        return samples

    def process_batched(self, samples):
        return [keep_by_strategy((self.get_keep_boolean(w, self.min_width, self.max_width)
                                  and self.get_keep_boolean(h, self.min_height, self.max_height)
                                  for w, h in zip(s[StatsKeys.image_width], s[StatsKeys.image_height])), self.any)
                for s in samples[Fields.stats]]
