"""video_audio_ASR_mapper and video_audio_speech_emotion_mapper (FunASR SenseVoiceSmall).

No tiny SenseVoice can be built here (its FunASR folder needs a trained BPE tokenizer, CMVN
statistics and the encoder's config), so the fast tests cover parameters, missing models, the
pairing with video_tagging_from_audio_mapper's tags, and Data-Juicer's reading of SenseVoice's
output; the slow test runs the real model when its folder is there.
"""
import os

import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.vision_tiny_models import no_models, vision_models  # noqa: F401
from tests.ops.vision_other_helpers import dry_run

ASR, EMO = "video_audio_ASR_mapper", "video_audio_speech_emotion_mapper"
MODEL = "FunAudioLLM/SenseVoiceSmall"


@pytest.fixture
def fake_folder(tmp_path, monkeypatch):
    """A folder with SenseVoice's file names (not a loadable model: nothing may load it)."""
    folder = tmp_path / "models" / MODEL
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text("model: SenseVoiceSmall\n")
    (folder / "model.pt").write_bytes(b"")
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    return str(folder)


@pytest.mark.parametrize("name", [ASR, EMO])
def test_missing_model_names_every_path(no_models, name):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(name)()
    assert f"looked at: {no_models}/{MODEL}" in str(e.value)


@pytest.mark.parametrize("name", [ASR, EMO])
def test_missing_model_under_dry_run(no_models, make_recipe, capsys, name):
    rc, out = dry_run(make_recipe, [{name: {}}], capsys=capsys)
    assert rc == 2 and f"{no_models}/{MODEL}" in out


def test_a_folder_that_is_not_funasrs_is_refused(tmp_path):
    (tmp_path / "sv").mkdir()
    (tmp_path / "sv" / "config.yaml").write_text("x: 1\n")
    with pytest.raises(FileNotFoundError, match=r"not a FunASR SenseVoice model folder \(missing model.pt\)"):
        OPERATORS.get(ASR)(model_dir_ASR=str(tmp_path / "sv"))


def test_sensevoice_output_read_as_data_juicer_reads_it():
    from data_juicer.models.speech import emotion, language_and_text

    raw = "<|en|><|HAPPY|><|Speech|><|woitn|>hello world"
    assert language_and_text(raw) == {"language": "en", "asr": "hello world"}
    assert emotion(raw) == "HAPPY"
    assert language_and_text("<|zh|><|NEUTRAL|><|BGM|><|woitn|>") == {"language": "zh", "asr": ""}


def test_only_speech_videos_with_audio_reach_the_model(fake_folder, video_files):
    # "motion" has no audio stream, "audio" is tagged Music: no waveform is recognised, the model is not loaded
    vids = [[video_files["motion"], video_files["audio"]], [], [video_files["audio"]]]
    rows = {"text": ["a", "b", "c"], "videos": vids,
            Fields.meta: [{"video_audio_tags": ["Speech", "Music"]}, {}, {"speech_ASR": ["kept"],
                                                                          "speech_emotion": ["kept"]}]}
    out = OPERATORS.get(ASR)().process_batched({k: list(v) for k, v in rows.items()})
    assert [m["speech_ASR"] for m in out[Fields.meta]] == [["EMPTY", {"language": "", "asr": ""}], [], ["kept"]]
    out = OPERATORS.get(EMO)().process_batched({k: list(v) for k, v in rows.items()})
    assert [m["speech_emotion"] for m in out[Fields.meta]] == [["EMPTY", ""], [], ["kept"]]
    from data_juicer.models.loader import loaded_models

    assert not [k for k in loaded_models() if k[0] == "sensevoice"]


def test_untagged_videos_are_an_error(fake_folder, video_files):
    rows = {"text": ["a"], "videos": [[video_files["audio"]]], Fields.meta: [{}]}
    with pytest.raises(ValueError, match="must run after video_tagging_from_audio_mapper"):
        OPERATORS.get(EMO)().process_batched(rows)


def _real_model():
    from data_juicer.models.loader import model_dirs

    for d in model_dirs():
        if os.path.isfile(os.path.join(d, MODEL, "model.pt")):
            return os.path.join(d, MODEL)
    return None


@pytest.mark.slow
@pytest.mark.skipif(_real_model() is None, reason=f"the SenseVoiceSmall model ({MODEL}, FunASR layout) is not in "
                                                   "DJ_MODELS_DIR; no tiny SenseVoice can be built offline")
def test_real_sensevoice_on_a_speech_track(video_files):
    rows = {"text": ["a"], "videos": [[video_files["audio"]]], Fields.meta: [{"video_audio_tags": ["Speech"]}]}
    out = OPERATORS.get(ASR)(accelerator="cpu").process_batched(rows)
    (value,) = out[Fields.meta][0]["speech_ASR"]
    assert set(value) == {"language", "asr"}
    out = OPERATORS.get(EMO)(accelerator="cpu").process_batched(rows)
    assert isinstance(out[Fields.meta][0]["speech_emotion"][0], str)


@pytest.mark.slow
def test_batched_recognition_equals_one_at_a_time(monkeypatch):
    """A randomly initialised funasr SenseVoiceSmall (tiny encoder) with FunASR's real fbank front
    end: the waveforms of a batch, padded together, decode as they do one at a time."""
    import numpy as np
    import torch
    from funasr.frontends.wav_frontend import WavFrontend
    from funasr.models.sense_voice.model import SenseVoiceSmall

    import data_juicer.models.speech as sp

    torch.manual_seed(0)
    enc = dict(output_size=32, attention_heads=2, linear_units=37, num_blocks=2, tp_blocks=1, dropout_rate=0.0,
               positional_dropout_rate=0.0, attention_dropout_rate=0.0, input_layer="pe",
               pos_enc_class="SinusoidalPositionEncoder", normalize_before=True, kernel_size=11, sanm_shfit=0,
               selfattention_layer_type="sanm")
    model = SenseVoiceSmall(encoder="SenseVoiceEncoderSmall", encoder_conf=enc, input_size=560,
                            vocab_size=30000).eval()
    fe = WavFrontend(fs=16000, window="hamming", n_mels=80, frame_length=25, frame_shift=10, lfr_m=7, lfr_n=6)

    class Tok:  # SenseVoice's BPE tokenizer is not buildable offline: the token ids, as text
        def decode(self, ids):
            return " ".join(str(i) for i in ids[:8])

    monkeypatch.setattr(sp, "load_sensevoice",
                        lambda name, device, who: (model, {"frontend": fe, "tokenizer": Tok(), "device": "cpu"}))
    rs = np.random.RandomState(0)
    waves = [rs.randn(16000).astype("float32") * 0.1, rs.randn(8000).astype("float32") * 0.1]
    batched = sp.transcribe(waves)
    assert batched == [sp.transcribe([w])[0] for w in waves]
    assert batched == ["29253 15117 26335 6469 24890 12402 28206 24890",
                       "29253 15117 26335 6469 24033 24890 12402 29207"]
