import sys

from data_juicer.media.audio import load_row_audios
from data_juicer.ops.base import Filter
from data_juicer.ops.common.media import check_any_or_all, keep_by_strategy
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("audio_duration_filter")
class AudioDurationFilter(Filter):
    """Keeps samples whose audios last between ``min_duration`` and ``max_duration`` seconds
    (stat ``audio_duration``, one per audio in order: decoded samples / sampling rate, as
    ``librosa.get_duration`` gives in Data-Juicer). ``any_or_all`` decides over several audios;
    a sample without audio is kept. Decoded audio is shared with the other audio ops of a fused
    pass. An audio with no samples lasts 0 s (Data-Juicer's torchcodec loader fails on it).
    """

    modality = "audio"
    uses = (InterVars.loaded_audios,)
    requires = ("soundfile",)

    def __init__(self, min_duration: int = 0, max_duration: int = sys.maxsize, any_or_all: str = "any", **kwargs):
        """
        :param min_duration: shortest audio kept, in seconds
        :param max_duration: longest audio kept, in seconds
        :param any_or_all: keep a sample when ``any`` of its audios is in range, or only when ``all`` are
        """
        super().__init__(**kwargs)
        self.min_duration, self.max_duration = min_duration, max_duration
        self.any = check_any_or_all(any_or_all, self.name)

    def compute_stats_batched(self, samples, context=False):
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.audio_duration in stat:
                continue
            paths = samples[self.audio_key][i] if self.audio_key in samples else None
            if not paths:
                stat[StatsKeys.audio_duration] = []
                continue
            audios = load_row_audios(self, samples, i)
            stat[StatsKeys.audio_duration] = [float(audios[p][0].shape[-1]) / audios[p][1] for p in paths]
        return samples

    def process_batched(self, samples):
        return [keep_by_strategy((self.get_keep_boolean(d, self.min_duration, self.max_duration)
                                  for d in s[StatsKeys.audio_duration]), self.any)
                for s in samples[Fields.stats]]
