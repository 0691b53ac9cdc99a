import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "video_nsfw_filter"
MODEL = "Falconsai/nsfw_image_detection"


@pytest.mark.parametrize("params,needle", [({"frame_sampling_method": "every"}, "Frame sampling method [every]"),
                                           ({"reduce_mode": "sum"}, "Reduce mode [sum]"),
                                           ({"any_or_all": "x"}, "Keep strategy [x]"),
                                           ({"video_backend": "cv2"}, "video_backend")])
def test_bad_params_are_rejected(no_models, params, needle):
    with pytest.raises(ValueError) as e:
        OPERATORS.get(NAME)(**params)
    assert needle in str(e.value)


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/{MODEL}" in str(e.value) and "needed by video_nsfw_filter" in str(e.value)


@pytest.mark.slow
def test_keyframe_scores_reduced_per_video(models_env, video_files):
    import torch
    from transformers import AutoImageProcessor, ViTForImageClassification

    from data_juicer.media.video import extract_key_frames

    root = models_env(MODEL)
    vids = [video_files["motion"], video_files["scenes"]]
    op = OPERATORS.get(NAME)(reduce_mode="max", max_score=0.3)
    samples = {"videos": [vids, [], [vids[0]]], Fields.stats: [{}, {}, {}]}
    samples, keep = op.decide_batch(samples)
    got = [s["video_nsfw_score"] for s in samples[Fields.stats]]
    assert len(got[0]) == 2 and got[1] == [] and got[2] == pytest.approx(got[0][:1], abs=1e-7)
    # Data-Juicer: all key frames of one video through the processor at once, softmax[:, 1], max
    model = ViTForImageClassification.from_pretrained(f"{root}/{MODEL}").eval()
    proc = AutoImageProcessor.from_pretrained(f"{root}/{MODEL}", backend="pil")
    for v, val in zip(vids, got[0]):
        frames = extract_key_frames(v)
        with torch.no_grad():
            ref = torch.softmax(model(**proc(images=frames, return_tensors="pt")).logits, -1)[:, 1].max().item()
        assert val == pytest.approx(ref, abs=1e-6)
    assert keep == [any(v <= 0.3 for v in got[0]), True, got[2][0] <= 0.3]


@pytest.mark.slow
def test_frame_field_takes_frame_num_files_evenly(models_env, tmp_path):
    models_env(MODEL)
    frames = write_images(tmp_path, 5)
    op = OPERATORS.get(NAME)(frame_field="frames", frame_num=2)
    both = OPERATORS.get(NAME)(frame_field="frames", frame_num=5)
    a = op.decide_batch({"videos": [[]], "frames": [[frames]], Fields.stats: [{}]})[0][Fields.stats][0]
    ends = both.decide_batch({"videos": [[]], "frames": [[[frames[0], frames[4]]]], Fields.stats: [{}]})[0]
    # frame_num=2 of 5 files: the first and the last (np.linspace(0, 4, 2, dtype=int))
    assert a["video_nsfw_score"] == pytest.approx(ends[Fields.stats][0]["video_nsfw_score"], abs=1e-7)
