import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.vision_tiny_models import models_env, no_models, vision_models  # noqa: F401

NAME = "video_audio_detect_age_gender_mapper"
MODEL = "audeering/wav2vec2-large-robust-24-ft-age-gender"


def test_missing_default_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)(hf_audio_mapper=None)
    assert f"looked at: {no_models}/{MODEL}" in str(e.value)


@pytest.mark.slow
def test_age_gender_for_speech_videos_only(models_env, video_files):
    import torch
    from transformers import Wav2Vec2FeatureExtractor

    from data_juicer.media.audio import load_audio
    from data_juicer.models.vision import age_gender_class

    root = models_env(MODEL)
    a = video_files["audio"]
    op = OPERATORS.get(NAME)()
    rows = {"videos": [[a, a], [], [a]],
            Fields.meta: [{"video_audio_tags": ["Speech", "Music"]}, {}, {"video_audio_tags": ["EMPTY"]}]}
    out = op.process_batched(rows)[Fields.meta]
    model = age_gender_class().from_pretrained(f"{root}/{MODEL}").eval()
    fe = Wav2Vec2FeatureExtractor.from_pretrained(f"{root}/{MODEL}")
    with torch.no_grad():
        _, age, g = model(fe(load_audio(a, 16000)[0], sampling_rate=16000, return_tensors="pt")["input_values"])
    first = out[0]["audio_speech_attribute"]
    assert first[1] == [] and out[1]["audio_speech_attribute"] == [] and out[2]["audio_speech_attribute"] == [[]]
    assert first[0]["Age"] == [int(age.item() * 100)]
    assert [first[0]["female"][0], first[0]["male"][0], first[0]["child"][0]] == pytest.approx(g[0].tolist(), abs=1e-6)
    assert sum(g[0].tolist()) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.slow
def test_needs_the_audio_tags_first(models_env, video_files):
    models_env(MODEL)
    with pytest.raises(ValueError, match="after video_tagging_from_audio_mapper"):
        OPERATORS.get(NAME)().process_batched({"videos": [[video_files["audio"]]], Fields.meta: [{}]})
