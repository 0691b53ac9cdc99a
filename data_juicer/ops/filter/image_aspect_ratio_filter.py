from data_juicer.media.image import load_row_images
from data_juicer.ops.base import Filter
from data_juicer.ops.common.media import check_any_or_all, keep_by_strategy
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("image_aspect_ratio_filter")
class ImageAspectRatioFilter(Filter):
    """Keeps samples whose images' aspect ratios (width / height, stat ``aspect_ratios``, one per
    image in order) are within [min_ratio, max_ratio]; ``any_or_all`` decides over several
    images. A sample without images is kept. Same stats and decisions as Data-Juicer 1.6.1.
    """

    modality = "image"
    uses = (InterVars.loaded_images,)
    requires = ("pillow",)

    def __init__(self, min_ratio: float = 0.333, max_ratio: float = 3.0, any_or_all: str = "any", **kwargs):
        """
        :param min_ratio: smallest aspect ratio (W/H) kept
        :param max_ratio: largest aspect ratio (W/H) kept
        :param any_or_all: keep a sample when ``any`` of its images is in range, or only when ``all`` are
        """
        super().__init__(**kwargs)
        self.min_ratio = min_ratio
        self.max_ratio = max_ratio
        self.any = check_any_or_all(any_or_all, self.name)

    def compute_stats_batched(self, samples, context=False):
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.aspect_ratios in stat:
                continue
            paths = (samples[self.image_key][i] if self.image_key in samples else None) or []
            images = load_row_images(self, samples, i) if paths else {}
            stat[StatsKeys.aspect_ratios] = [images[p].width / images[p].height for p in paths]
        return samples

    def process_batched(self, samples):
        return [keep_by_strategy((self.get_keep_boolean(r, self.min_ratio, self.max_ratio)
                                  for r in s[StatsKeys.aspect_ratios]), self.any)
                for s in samples[Fields.stats]]
