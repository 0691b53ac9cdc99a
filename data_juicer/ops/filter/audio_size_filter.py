from data_juicer.media.files import file_size, size_to_bytes
from data_juicer.ops.base import Filter
from data_juicer.ops.common.media import check_any_or_all, keep_by_strategy
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


@OPERATORS.register_module("audio_size_filter")
class AudioSizeFilter(Filter):
    """Keeps samples whose audio files' sizes in bytes (stat ``audio_sizes``, one per audio in
    order) are within [min_size, max_size]; ``any_or_all`` decides over several audios. Files
    are not decoded. A sample without audio is kept. Sizes are written like ``"20KB"`` or
    ``"1.5MiB"`` (powers of 1024; unlike Data-Juicer, decimals are honoured).
    """

    modality = "audio"
    requires = ()

    def __init__(self, min_size: str = "0", max_size: str = "1TB", any_or_all: str = "any", **kwargs):
        """
        :param min_size: smallest audio file kept (bytes, or with a unit: ``KB``/``KiB``, ``MB``...)
        :param max_size: largest audio file kept (default ``1TB``: no limit in practice)
        :param any_or_all: keep a sample when ``any`` of its audios is in range, or only when ``all`` are
        """
        super().__init__(**kwargs)
        self.min_size = size_to_bytes(min_size)
        self.max_size = size_to_bytes(max_size)
        self.any = check_any_or_all(any_or_all, self.name)

    def compute_stats_batched(self, samples):
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.audio_sizes in stat:
                continue
            paths = samples[self.audio_key][i] if self.audio_key in samples else None
            stat[StatsKeys.audio_sizes] = [file_size("audio", p) for p in paths] if paths else []
        return samples

    def process_batched(self, samples):
        return [keep_by_strategy((self.get_keep_boolean(v, self.min_size, self.max_size)
                                  for v in s[StatsKeys.audio_sizes]), self.any)
                for s in samples[Fields.stats]]
