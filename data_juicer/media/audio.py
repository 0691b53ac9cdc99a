"""Audio: decoded once per sample into a mono float32 array, as Data-Juicer 1.6.1 decodes it.

Data-Juicer 1.6.1 loads audio through ``datasets.Audio`` (torchcodec, i.e. FFmpeg): all samples
as float32 in [-1, 1], channels averaged into one, at the file's own rate unless a rate is asked
for. Here libsndfile (``soundfile``) decodes PCM and lossless files (WAV, FLAC, AIFF...) and PyAV
(FFmpeg, the decoders torchcodec uses) the lossy ones (MP3, OGG, M4A/AAC, Opus...); PCM samples
become the same float32 values
(``x / 2**15`` for 16-bit) and channels are averaged the same way. A requested
``sampling_rate`` different from the file's is reached with ``librosa.resample`` (soxr); this
is the one place values can differ slightly from torchcodec's FFmpeg resampler (Data-Juicer's
own audio ops never resample: they load at the native rate).

``load_row_audios`` loads the distinct audios of one row, reusing what the row's
``__dj__context__`` already holds (keys ``("audio", path, sampling_rate)``, so an audio never
collides with an image or video container cached under the same path).
"""

from __future__ import annotations

import os
from typing import Optional

from data_juicer.media.errors import MediaError, missing_file
from data_juicer.media.image import row_context
from data_juicer.utils.lazy import require

__all__ = ["load_audio", "load_row_audios", "audio_context_key"]

# uncompressed / lossless containers libsndfile decodes to the very values FFmpeg gives
_SNDFILE_FORMATS = {"WAV", "WAVEX", "FLAC", "AIFF", "AU", "W64", "RF64", "CAF"}


def _decode_pyav(path: str, who: str):
    import numpy as np

    av = require("av", who=who)
    with av.open(path, "r") as container:
        if not container.streams.audio:
            raise MediaError("audio", path, "the file has no audio stream")
        stream = container.streams.audio[0]
        resampler = av.AudioResampler(format="fltp")  # float planar, native rate and layout
        chunks = []
        sr = stream.codec_context.sample_rate or stream.rate
        for frame in container.decode(stream):
            for out in resampler.resample(frame):
                chunks.append(out.to_ndarray())
        for out in resampler.resample(None):
            chunks.append(out.to_ndarray())
    if not chunks:
        return np.zeros(0, dtype=np.float32), int(sr)
    data = np.concatenate(chunks, axis=1).astype(np.float32, copy=False)  # (channels, n)
    y = data[0] if data.shape[0] == 1 else np.mean(data, axis=0)
    return np.ascontiguousarray(y, dtype=np.float32), int(sr)


def load_audio(path, sampling_rate: Optional[int] = None, who: str = ""):
    """``(mono float32 array, sampling rate)`` of an audio file.

    ``sampling_rate=None`` keeps the file's own rate. A missing path is a ``FileNotFoundError``,
    an undecodable file a ``MediaError``; both name the path.
    """
    import numpy as np

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise missing_file("audio", path)
    sf = require("soundfile", who=who)
    try:
        fmt = sf.info(path).format
    except Exception:
        fmt = None
    try:
        if fmt in _SNDFILE_FORMATS:
            data, sr = sf.read(path, dtype="float32", always_2d=True)  # (n, channels)
            y = data[:, 0] if data.shape[1] == 1 else np.mean(data, axis=1, dtype=np.float32)
            y = np.ascontiguousarray(y, dtype=np.float32)
        else:  # lossy codecs: FFmpeg's decoders, as torchcodec (encoder delay trimmed the same way)
            y, sr = _decode_pyav(path, who)
    except MediaError:
        raise
    except Exception as e:
        raise MediaError("audio", path, e) from e
    if sampling_rate and int(sampling_rate) != int(sr):
        librosa = require("librosa", who=who)
        y = librosa.resample(y, orig_sr=sr, target_sr=int(sampling_rate)).astype(np.float32, copy=False)
        sr = int(sampling_rate)
    return y, int(sr)


def audio_context_key(path: str, sampling_rate: Optional[int] = None) -> tuple:
    """The ``__dj__context__`` key an audio loaded at ``sampling_rate`` is cached under."""
    return ("audio", path, sampling_rate)


def load_row_audios(op, samples: dict, row: int, context: Optional[dict] = None,
                    sampling_rate: Optional[int] = None, paths: Optional[list] = None) -> dict:
    """``{path: (array, sr)}`` for the distinct audios of row ``row`` (``samples[op.audio_key]``), in order."""
    if paths is None:
        paths = samples[op.audio_key][row] or []
    ctx = row_context(samples, row, context)
    who = getattr(op, "name", "")
    out: dict = {}
    for path in paths:
        if path in out:
            continue
        key = audio_context_key(path, sampling_rate)
        if ctx is not None and key in ctx:
            out[path] = ctx[key]
            continue
        out[path] = load_audio(path, sampling_rate, who)
        if ctx is not None:
            ctx[key] = out[path]
    return out
