import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "image_captioning_mapper"
MODEL = "tiny/blip-image-captioning"
IMG, EOC = "<__dj__image>", "<|__dj__eoc|>"


def test_bad_candidate_mode_is_rejected(no_models):
    with pytest.raises(ValueError, match=r"Keep strategy \[best\]"):
        OPERATORS.get(NAME)(keep_candidate_mode="best")


def test_missing_default_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/Salesforce/blip2-opt-2.7b" in str(e.value)


def test_captions_follow_their_own_tokens():
    from data_juicer.ops.common.captions import insert_after_tokens, only_special_tokens

    chunk = f"{IMG} first {IMG} second"
    assert only_special_tokens(chunk + EOC) == f"{IMG}{IMG}{EOC}"
    assert insert_after_tokens(f"{IMG}{IMG}", IMG, ["a", "b"]) == f"{IMG} a {IMG} b "


def test_similar_one_keeps_the_candidate_closest_to_the_text():
    from data_juicer.ops.common.captions import choose_captions

    cands = ["completely unrelated words about boats and the sea", "a photo of a cat sitting on the mat"]
    assert choose_captions("similar_one_simhash", "a photo of a cat sitting on a mat", cands) == [cands[1]]
    assert choose_captions("all", "x", cands) == cands


@pytest.mark.slow
def test_new_samples_per_candidate_after_their_original(models_env, tmp_path):
    import torch

    root = models_env(MODEL)
    imgs = write_images(tmp_path, 3)
    torch.manual_seed(0)
    op = OPERATORS.get(NAME)(hf_img2seq=f"{root}/{MODEL}", caption_num=2, keep_candidate_mode="all",
                             gpu_batch_size=2)
    op.max_new_tokens = 6  # random weights never stop early: keep generation short
    rows = {"text": [f"{IMG}{IMG} two pictures{EOC} tail", "no image", f"{IMG} one"],
            "images": [imgs[:2], [], imgs[2:]], Fields.stats: [{}, {}, {}]}
    out = op.process_batched(rows)
    # originals kept, each followed by caption_num new samples; the sample without images adds none
    assert len(out["text"]) == 3 + 2 + 2
    assert out["text"][0] == rows["text"][0] and out["text"][3] == "no image" and out["text"][4] == rows["text"][2]
    assert out["images"][1] == imgs[:2] and out["images"][6] == imgs[2:]
    for new in out["text"][1:3]:
        first, rest = new.split(EOC, 1)
        assert first.startswith(IMG + " ") and first.count(IMG) == 2 and rest == f"{EOC}"
    assert out["text"][5].startswith(IMG + " ") and out["text"][5].endswith(" " + EOC)
    assert all(isinstance(s, dict) for s in out[Fields.stats]) and len(out[Fields.stats]) == 7
    drop = OPERATORS.get(NAME)(hf_img2seq=f"{root}/{MODEL}", keep_original_sample=False)
    drop.max_new_tokens = 4
    assert len(drop.process_batched({k: list(v) for k, v in rows.items()})["text"]) == 2
