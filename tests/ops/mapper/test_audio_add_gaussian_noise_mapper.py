import os

import numpy as np
import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.media.audio import load_audio
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import make_media_files


def make(**kw):
    return OPERATORS.get("audio_add_gaussian_noise_mapper")(**kw)


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.delenv("DJ_PRODUCED_DATA_DIR", raising=False)
    return make_media_files(tmp_path / "m")


def test_noise_added_and_stable(files):
    src = files["silent"]
    out = run_ops_on_rows([make(p=1.0, min_amplitude=0.01, max_amplitude=0.02)], [{"audios": [src, src]},
                                                                                     {"audios": []}])
    new = out[0]["audios"]
    assert new[0] == new[1] != src and new[0].endswith(".wav") and os.path.isfile(new[0])
    assert out[0][Fields.source_file] == [src, src] and out[1][Fields.source_file] == []
    y, sr = load_audio(new[0])
    assert sr == 16000 and len(y) == 16000
    assert 0.01 <= float(np.std(y)) <= 0.021  # noise of amplitude in [0.01, 0.02] over silence
    again = run_ops_on_rows([make(p=1.0, min_amplitude=0.01, max_amplitude=0.02)], [{"audios": [src]}])
    assert again[0]["audios"] == [new[0]]


def test_p_zero_rewrites_unchanged(files):
    out = run_ops_on_rows([make(p=0.0)], [{"audios": [files["tone16k"]]}])
    assert out[0]["audios"][0] != files["tone16k"]
    assert np.array_equal(load_audio(out[0]["audios"][0])[0], load_audio(files["tone16k"])[0])


def test_params(files):
    with pytest.raises(ValueError, match="min_amplitude"):
        make(min_amplitude=0.5, max_amplitude=0.1)
    with pytest.raises(ValueError, match="p must be"):
        make(p=2)
