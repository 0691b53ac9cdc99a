import os

import pytest

from data_juicer.core.runner import OpError, run_ops_on_rows
from data_juicer.media.audio import load_audio
from data_juicer.ops import OPERATORS
from data_juicer.ops.mapper.audio_ffmpeg_wrapped_mapper import ffmpeg_filter_command, filter_spec
from data_juicer.utils.constant import Fields
from tests.media.files import make_media_files


def make(**kw):
    return OPERATORS.get("audio_ffmpeg_wrapped_mapper")(**kw)


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.delenv("DJ_PRODUCED_DATA_DIR", raising=False)
    return make_media_files(tmp_path / "m")


def test_command_is_ffmpeg_pythons():
    assert filter_spec("volume", {"volume": "0.5:x", "a": 1}) == "volume=a=1:volume=0.5\\:x"
    assert ffmpeg_filter_command("in.wav", "out.wav", "atrim", {"end": 0.5}, ["-ar", "8000"], True) == [
        "ffmpeg", "-i", "in.wav", "-filter_complex", "[0]atrim=end=0.5[s0]", "-map", "[s0]", "out.wav",
        "-ar", "8000", "-y"]


def test_trim(files, tmp_path):
    src = files["tone16k"]
    # global args go after the output, as ffmpeg-python puts them: an output option such as -ar
    # is then ignored by FFmpeg (in Data-Juicer too); global ones like -loglevel apply
    op = make(filter_name="atrim", filter_kwargs={"end": 0.5}, global_args=["-ar", "8000", "-loglevel", "error"],
              save_dir=str(tmp_path / "o"))
    out = run_ops_on_rows([op], [{"audios": [src]}, {"audios": []}])
    new = out[0]["audios"][0]
    assert os.path.dirname(new) == str(tmp_path / "o") and new.endswith(".wav")
    y, sr = load_audio(new)
    assert (len(y), sr) == (8000, 16000)
    assert out[0][Fields.source_file] == [src] and out[1][Fields.source_file] == []
    assert run_ops_on_rows([op], [{"audios": [src]}])[0]["audios"] == [new]


def test_no_filter_changes_nothing(files):
    out = run_ops_on_rows([make()], [{"audios": [files["tone16k"]]}])
    assert out[0]["audios"] == [files["tone16k"]]


def test_failure_names_file(files):
    with pytest.raises(OpError, match="ffmpeg filter 'nosuchfilter' failed on '.*tone16k.wav'"):
        run_ops_on_rows([make(filter_name="nosuchfilter", skip_op_error=False)], [{"audios": [files["tone16k"]]}])
    with pytest.raises(OpError, match="missing.wav"):
        run_ops_on_rows([make(filter_name="atrim", skip_op_error=False)], [{"audios": [files["missing_audio"]]}])
