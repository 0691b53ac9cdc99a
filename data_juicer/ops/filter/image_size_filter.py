from data_juicer.media.files import file_size, size_to_bytes
from data_juicer.ops.base import Filter
from data_juicer.ops.common.media import check_any_or_all, keep_by_strategy
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


@OPERATORS.register_module("image_size_filter")
class ImageSizeFilter(Filter):
    """Keeps samples whose image file sizes in bytes (stat ``image_sizes``, one per image in
    order) are within [min_size, max_size]; ``any_or_all`` decides over several images. Images
    are not decoded: the size is the length of the row's ``image_bytes`` when it holds bytes for
    every image, else the file's size. A sample without images is kept.

    Sizes are written like ``"20KB"`` or ``"1.5MiB"`` (powers of 1024). Unlike Data-Juicer,
    whose parser drops the decimal point (``"1.5MB"`` = 15 MiB there), decimals are honoured.
    """

    modality = "image"
    requires = ()

    def __init__(self, min_size: str = "0", max_size: str = "1TB", any_or_all: str = "any", **kwargs):
        """
        :param min_size: smallest image size kept (bytes, or with a unit: ``KB``/``KiB``, ``MB``...)
        :param max_size: largest image size kept (default ``1TB``: no limit in practice)
        :param any_or_all: keep a sample when ``any`` of its images is in range, or only when ``all`` are
        """
        super().__init__(**kwargs)
        self.min_size = size_to_bytes(min_size)
        self.max_size = size_to_bytes(max_size)
        self.any = check_any_or_all(any_or_all, self.name)

    def compute_stats_batched(self, samples):
        col_bytes = samples.get(self.image_bytes_key)
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.image_sizes in stat:
                continue
            paths = samples[self.image_key][i] if self.image_key in samples else None
            if not paths:
                stat[StatsKeys.image_sizes] = []
                continue
            data = col_bytes[i] if col_bytes is not None else None
            if isinstance(data, list) and len(data) == len(paths) and all(
                    isinstance(b, (bytes, bytearray)) for b in data):
                stat[StatsKeys.image_sizes] = [len(b) for b in data]
            else:
                stat[StatsKeys.image_sizes] = [file_size("image", p) for p in paths]
        return samples

    def process_batched(self, samples):
        return [keep_by_strategy((self.get_keep_boolean(v, self.min_size, self.max_size)
                                  for v in s[StatsKeys.image_sizes]), self.any)
                for s in samples[Fields.stats]]
