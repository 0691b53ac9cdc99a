import numpy as np
import pytest

from data_juicer.media import MediaError
from data_juicer.media.audio import audio_context_key, load_audio, load_row_audios
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401


@pytest.mark.parametrize("name,n,sr", [
    ("tone16k", 16000, 16000),
    ("tone44k_stereo", 22050, 44100),
    ("tone8k_flac", 16000, 8000),
    ("tone_mp3", 16000, 16000),  # FFmpeg trims the encoder delay: the original length comes back
    ("silent", 16000, 16000),
    ("zero_length", 0, 16000),
    ("truncated_audio", 160, 16000),  # what is there is decoded
])
def test_load_audio_lengths_and_rates(media_files, name, n, sr):
    y, rate = load_audio(media_files[name])
    assert y.dtype == np.float32 and y.ndim == 1
    assert (len(y), rate) == (n, sr)


def test_pcm16_values_are_exact(media_files):
    y, _ = load_audio(media_files["tone16k"])
    # sample 4 of 0.5*sin(2*pi*440*4/16000), quantised to int16 and scaled by 1/32768
    q = np.round(0.5 * np.sin(2 * np.pi * 440 * 4 / 16000) * 32767) / 32768
    assert abs(float(y[4]) - q) < 1e-4
    assert abs(float(np.max(y)) - 0.5) < 1e-3


def test_stereo_is_the_mean_of_channels(media_files):
    import soundfile as sf

    y, _ = load_audio(media_files["tone44k_stereo"])
    both, _ = sf.read(media_files["tone44k_stereo"], dtype="float32")
    assert np.array_equal(y, ((both[:, 0] + both[:, 1]) / 2).astype(np.float32))


def test_resample(media_files):
    y, sr = load_audio(media_files["tone44k_stereo"], sampling_rate=16000)
    assert (len(y), sr) == (8000, 16000)
    y2, sr2 = load_audio(media_files["tone16k"], sampling_rate=16000)  # same rate: untouched
    assert np.array_equal(y2, load_audio(media_files["tone16k"])[0])


@pytest.mark.parametrize("name,exc", [("missing_audio", FileNotFoundError), ("corrupt_audio", MediaError)])
def test_bad_audio(media_files, name, exc):
    with pytest.raises(exc, match="audio '" + media_files[name]):
        load_audio(media_files[name])


class _Op:
    name = "probe"
    audio_key = "audios"


def test_load_row_audios_shares_context(media_files, monkeypatch):
    import data_juicer.media.audio as ma

    calls = []
    real = ma.load_audio
    monkeypatch.setattr(ma, "load_audio", lambda p, sr=None, who="": calls.append(p) or real(p, sr, who))
    a, b = media_files["tone16k"], media_files["silent"]
    samples = {"audios": [[a, b, a]], Fields.context: [{}]}
    got = load_row_audios(_Op(), samples, 0)
    assert list(got) == [a, b] and got[a][1] == 16000 and len(calls) == 2
    load_row_audios(_Op(), samples, 0)
    assert len(calls) == 2
    assert audio_context_key(a) in samples[Fields.context][0]
    load_row_audios(_Op(), samples, 0, sampling_rate=8000)  # another rate is another entry
    assert len(calls) == 4
