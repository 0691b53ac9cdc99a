import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.vision_tiny_models import models_env, no_models, vision_models  # noqa: F401

NAME = "video_tagging_from_audio_mapper"
MODEL = "MIT/ast-finetuned-audioset-10-10-0.4593"


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/{MODEL}" in str(e.value)
    assert "needed by video_tagging_from_audio_mapper" in str(e.value)


@pytest.mark.slow
def test_one_tag_per_video_and_empty_without_audio(models_env, video_files):
    import torch
    from transformers import ASTFeatureExtractor, ASTForAudioClassification

    from data_juicer.media.audio import load_audio

    root = models_env(MODEL)
    a, silent = video_files["audio"], video_files["motion"]
    op = OPERATORS.get(NAME)(tag_field_name="tags")
    rows = {"videos": [[a, silent, a], [], [silent]], Fields.meta: [{}, {}, {"tags": ["kept"]}]}
    out = op.process_batched(rows)[Fields.meta]
    model = ASTForAudioClassification.from_pretrained(f"{root}/{MODEL}").eval()
    fe = ASTFeatureExtractor.from_pretrained(f"{root}/{MODEL}")
    with torch.no_grad():
        label = model.config.id2label[model(**fe(load_audio(a, 16000)[0], sampling_rate=16000,
                                                 return_tensors="pt")).logits.argmax(-1).item()]
    assert label in ("Speech", "Music", "Sine wave")
    assert out == [{"tags": [label, "EMPTY", label]}, {"tags": []}, {"tags": ["kept"]}]
