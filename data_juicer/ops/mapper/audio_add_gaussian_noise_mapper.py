import hashlib
import os
from typing import Optional

from data_juicer.media.audio import audio_context_key, load_row_audios
from data_juicer.media.files import atomic_write, file_digest, transform_file_name
from data_juicer.media.image import row_context
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.media import row_source_files
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars
from data_juicer.utils.lazy import require


@OPERATORS.register_module("audio_add_gaussian_noise_mapper")
class AudioAddGaussianNoiseMapper(Mapper):
    """Adds white Gaussian noise to each audio with probability ``p`` and points the sample at
    the new file. The noise is ``amplitude * N(0, 1)`` per sample (float32), with ``amplitude``
    drawn uniformly from [min_amplitude, max_amplitude] — audiomentations' ``AddGaussianNoise``,
    which Data-Juicer uses, computed here without that package. As in Data-Juicer every audio is
    rewritten (unchanged when the draw says no noise), with ``soundfile``'s default encoding for
    the extension; ``.ogg`` sources are written as ``.wav``. Files go to ``save_dir`` (else
    ``$DJ_PRODUCED_DATA_DIR/audio_add_gaussian_noise_mapper``, else ``__dj__produced_data__``
    beside the source). ``__dj__source_file__`` keeps the original paths.

    Differences from Data-Juicer 1.6.1, on purpose: the draws (apply or not, amplitude, noise)
    come from a generator seeded by the audio's content and the op's parameters (Data-Juicer uses
    the global generators), and names derive from the same (Data-Juicer's carry the process id
    and the time), so a rerun gives the same files; ``__dj__source_file__`` names the original
    file (Data-Juicer records the new one there).
    """

    modality = "audio"
    uses = (InterVars.loaded_audios,)
    requires = ("soundfile",)

    def __init__(self, min_amplitude: float = 0.001, max_amplitude: float = 0.015, p: float = 0.5,
                 save_dir: Optional[str] = None, **kwargs):
        """
        :param min_amplitude: smallest noise amplitude (linear, 1 = full scale)
        :param max_amplitude: largest noise amplitude (linear)
        :param p: probability that noise is added to an audio, in [0, 1]
        :param save_dir: folder the new audios are written to (default: beside the source, or
            ``$DJ_PRODUCED_DATA_DIR``)
        """
        super().__init__(**kwargs)
        if min_amplitude >= max_amplitude:
            raise ValueError(f"{self.name}: min_amplitude ({min_amplitude}) must be < max_amplitude ({max_amplitude})")
        if not 0 <= p <= 1:
            raise ValueError(f"{self.name}: p must be in [0, 1], got {p}")
        self.min_amplitude, self.max_amplitude, self.p, self.save_dir = min_amplitude, max_amplitude, p, save_dir
        self.params = {"min_amplitude": min_amplitude, "max_amplitude": max_amplitude, "p": p}

    def augment(self, y, path: str):
        """``y`` with noise added (or unchanged), from draws seeded by ``path``'s content and the parameters."""
        import numpy as np

        seed = hashlib.sha256(f"{self.name}|{self.params}|{file_digest(path)}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(seed[:8], "big"))
        if not rng.random() < self.p:
            return y
        amplitude = rng.uniform(self.min_amplitude, self.max_amplitude)
        return (y + amplitude * rng.standard_normal(y.shape[-1]).astype(np.float32)).astype(np.float32)

    def process_batched(self, samples):
        sf = require("soundfile", who=self.name)
        if self.audio_key not in samples:  # no media column: nothing to rewrite
            return samples
        n = len(samples[self.audio_key])
        sources = [None] * n
        for i in range(n):
            paths = samples[self.audio_key][i] or []
            sources[i] = row_source_files(samples, i, paths)
            if not paths:
                continue
            audios = load_row_audios(self, samples, i)
            ctx = row_context(samples, i)
            done = {}
            for path, (y, sr) in audios.items():
                ext = ".wav" if os.path.splitext(path)[1].lower() == ".ogg" else None
                out = transform_file_name(path, self.name, self.params, ext=ext, out_dir=self.save_dir)
                if not os.path.exists(out):
                    noisy = self.augment(y, path)
                    with atomic_write(out) as tmp:
                        sf.write(tmp, noisy, sr)
                    if ctx is not None:
                        ctx[audio_context_key(out)] = (noisy, sr)
                done[path] = out
            samples[self.audio_key][i] = [done[p] for p in paths]
        samples[Fields.source_file] = sources
        return samples
