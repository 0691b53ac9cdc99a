import sys

from pydantic import PositiveInt

from data_juicer.media.audio import load_row_audios
from data_juicer.ops.base import Filter
from data_juicer.ops.common.media import check_any_or_all, keep_by_strategy
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


def nmf_snr(audio, nmf_iter: int) -> float:
    """SNR in dB of an audio whose magnitude spectrogram is split by a 2-component NMF into signal and noise.

    As Data-Juicer: STFT magnitude, ``librosa.decompose.decompose`` (scikit-learn NMF, random init,
    seed 0), each component resynthesised with the original phase; 10*log10 of the mean powers;
    the largest float64 when the noise part is silent.
    """
    import librosa
    import librosa.decompose
    import numpy as np

    spec = librosa.stft(audio)
    mag = np.abs(spec)
    w, h = librosa.decompose.decompose(mag, n_components=2, init="random", random_state=0, max_iter=nmf_iter)
    phase = np.exp(1j * np.angle(mag))
    signal = librosa.istft(np.dot(w[:, 0:1], h[0:1, :]) * phase)
    noise = librosa.istft(np.dot(w[:, 1:2], h[1:2, :]) * phase)
    power_signal, power_noise = np.mean(signal ** 2), np.mean(noise ** 2)
    if power_noise == 0:
        return float(np.finfo(np.float64).max)
    return float(10 * np.log10(power_signal / power_noise))


@OPERATORS.register_module("audio_nmf_snr_filter")
class AudioNMFSNRFilter(Filter):
    """Keeps samples whose audios' signal-to-noise ratios in dB (stat ``audio_nmf_snr``, one per
    audio in order) are within [min_snr, max_snr]. The SNR splits the magnitude spectrogram into
    a signal and a noise part with a 2-component NMF (``nmf_iter_num`` iterations, seeded: the
    same value every run), as Data-Juicer 1.6.1 computes it. ``any_or_all`` decides over several
    audios; a sample without audio is kept. Decoded audio is shared with the other audio ops of a
    fused pass. (Data-Juicer keeps the phase of the magnitude, i.e. none; so does this op, for
    equal values.)
    """

    modality = "audio"
    uses = (InterVars.loaded_audios,)
    requires = ("soundfile", "librosa", "scikit-learn")

    def __init__(self, min_snr: float = 0, max_snr: float = sys.maxsize, nmf_iter_num: PositiveInt = 500,
                 any_or_all: str = "any", **kwargs):
        """
        :param min_snr: smallest SNR kept, in dB
        :param max_snr: largest SNR kept, in dB
        :param nmf_iter_num: most iterations of the NMF
        :param any_or_all: keep a sample when ``any`` of its audios is in range, or only when ``all`` are
        """
        super().__init__(**kwargs)
        self.min_snr, self.max_snr, self.nmf_iter_num = min_snr, max_snr, nmf_iter_num
        self.any = check_any_or_all(any_or_all, self.name)

    def compute_stats_batched(self, samples, context=False):
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.audio_nmf_snr in stat:
                continue
            paths = samples[self.audio_key][i] if self.audio_key in samples else None
            if not paths:
                stat[StatsKeys.audio_nmf_snr] = []
                continue
            audios = load_row_audios(self, samples, i)
            snrs = {}
            for p, (y, _) in audios.items():
                if not len(y):
                    raise ValueError(f"{self.name}: audio '{p}' has no samples, so it has no SNR; "
                                     "drop empty audios first (e.g. audio_duration_filter with min_duration > 0)")
                snrs[p] = nmf_snr(y, self.nmf_iter_num)
            stat[StatsKeys.audio_nmf_snr] = [snrs[p] for p in paths]
        return samples

    def process_batched(self, samples):
        return [keep_by_strategy((self.get_keep_boolean(v, self.min_snr, self.max_snr)
                                  for v in s[StatsKeys.audio_nmf_snr]), self.any)
                for s in samples[Fields.stats]]
