import json
import os

import numpy as np
import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.models.tiny_models2 import models2, models2_env  # noqa: F401
from tests.models.vision_tiny_models import no_models, vision_models, write_images  # noqa: F401
from tests.ops.vision_other_helpers import dry_run

NAME = "image_diffusion_mapper"
SD = "CompVis/stable-diffusion-v1-4"
CAPTIONER = "tiny/blip-image-captioning"


def _op(**kw):
    op = OPERATORS.get(NAME)(**kw)
    op.canvas, op.num_inference_steps, op.max_new_tokens = 32, 5, 4  # tiny models: a small, short run
    return op


def _pixels(path):
    from PIL import Image

    a = np.asarray(Image.open(path).convert("RGB"))
    return a.shape, a[0, 0].tolist(), round(float(a.mean()), 4)


def test_bad_dtype_is_rejected(no_models):
    with pytest.raises(ValueError, match=r"torch_dtype \[fp8\] is not supported"):
        OPERATORS.get(NAME)(torch_dtype="fp8")


def test_missing_models_name_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)(caption_key="cap")
    assert f"looked at: {no_models}/{SD}" in str(e.value)


def test_captioner_is_needed_only_without_caption_key(no_models, tmp_path):
    sd = tmp_path / "sd"
    sd.mkdir()
    (sd / "model_index.json").write_text("{}")
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)(hf_diffusion=str(sd))
    assert f"{no_models}/Salesforce/blip2-opt-2.7b" in str(e.value)
    assert OPERATORS.get(NAME)(hf_diffusion=str(sd), caption_key="cap").hf_diffusion == str(sd)
    assert OPERATORS.get(NAME).check_models({"hf_diffusion": str(sd), "caption_key": "cap"}) == [str(sd)]


def test_a_folder_without_pipeline_index_is_refused(no_models, tmp_path):
    (tmp_path / "not-sd").mkdir()
    with pytest.raises(FileNotFoundError, match="no model_index.json"):
        OPERATORS.get(NAME)(hf_diffusion=str(tmp_path / "not-sd"), caption_key="cap")


def test_missing_model_under_dry_run(no_models, make_recipe, capsys):
    rc, out = dry_run(make_recipe, [{NAME: {"caption_key": "cap"}}], capsys=capsys)
    assert rc == 2
    assert f"{no_models}/{SD}" in out


def test_wrong_caption_count_names_the_sample(no_models, tmp_path):
    sd = tmp_path / "sd"
    sd.mkdir()
    (sd / "model_index.json").write_text("{}")
    op = OPERATORS.get(NAME)(hf_diffusion=str(sd), caption_key="cap")
    assert op._given_captions({"cap": [None]}, 0, 2) == ["", ""]
    assert op._given_captions({"cap": ["<__dj__image> a red fox"]}, 0, 2) == ["a red fox", "a red fox"]
    assert op._given_captions({"cap": [["x", None]]}, 0, 2) == ["x", ""]
    with pytest.raises(ValueError, match="sample 0 has 1 captions in 'cap' for 2 images"):
        op._given_captions({"cap": [["x"]]}, 0, 2)


@pytest.mark.slow
def test_variants_per_image_after_their_original(models2_env, tmp_path):
    models2_env(SD)
    imgs = write_images(tmp_path / "in", 3)
    out_dir = tmp_path / "out"
    rows = {"text": ["a", "b", "c"], "images": [imgs[:2], [], imgs[2:]], "cap": [["red", "blue"], None, "green"],
            Fields.stats: [{}, {}, {}]}
    out = _op(caption_key="cap", save_dir=str(out_dir), aug_num=2).process_batched(rows)
    assert out["text"] == ["a", "a", "a", "b", "c", "c", "c"]
    assert out["images"][0] == imgs[:2] and out["images"][3] == [] and out["images"][4] == imgs[2:]
    made = out["images"][1] + out["images"][2] + out["images"][5] + out["images"][6]
    assert len(set(made)) == 6 and all(p.startswith(str(out_dir) + "/img") for p in made)
    assert sorted(os.listdir(out_dir)) == sorted(os.path.basename(p) for p in made)
    assert [_pixels(p) for p in out["images"][1]] == [
        ((30, 40, 3), [123, 130, 146], 120.1969), ((30, 40, 3), [118, 113, 152], 121.1214)]
    assert _pixels(out["images"][5][0]) == ((30, 40, 3), [114, 118, 152], 122.2042)
    # a rerun, and the same image in a smaller batch: the same names and the same pixels
    again = _op(caption_key="cap", save_dir=str(out_dir), aug_num=2).process_batched(
        {"text": ["c"], "images": [imgs[2:]], "cap": ["green"], Fields.stats: [{}]})
    assert again["images"][1:] == out["images"][5:]
    assert _pixels(again["images"][1][0]) == ((30, 40, 3), [114, 118, 152], 122.2042)


@pytest.mark.slow
def test_generated_captions_guide_the_pipeline(models2_env, tmp_path):
    import torch

    models2_env(SD, CAPTIONER)
    imgs = write_images(tmp_path / "in", 1)
    op = _op(hf_img2seq=CAPTIONER, save_dir=str(tmp_path / "out"), keep_original_sample=False)
    from PIL import Image

    torch.manual_seed(0)
    assert op._generated_captions([Image.open(imgs[0]).convert("RGB")]) == \
        ["A photo of a a photo of atypical 270 blinkedust"]
    torch.manual_seed(0)
    out = op.process_batched({"text": ["x"], "images": [imgs], Fields.stats: [{}]})
    assert out["text"] == ["x"] and out["images"][0][0].startswith(str(tmp_path / "out"))


@pytest.mark.slow
def test_end_to_end_bad_images_go_to_the_ledger(models2_env, tmp_path, make_recipe):
    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    models2_env(SD)
    imgs = write_images(tmp_path / "in", 1)
    bad = tmp_path / "in" / "junk.png"
    bad.write_bytes(b"not a png")
    rows = [{"id": "a", "text": "x", "images": imgs, "cap": "red"},
            {"id": "gone", "text": "x", "images": [str(tmp_path / "in" / "nope.png")], "cap": "red"},
            {"id": "junk", "text": "x", "images": [str(bad)], "cap": "red"}]
    # Data-Juicer's 512x512 canvas and 50 steps; strength 0.1 runs 5 of them
    recipe = make_recipe(rows, [{NAME: {"caption_key": "cap", "save_dir": str(tmp_path / "gen"), "strength": 0.1}}])
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = read_jsonl(out / "result.jsonl")
    assert [r["id"] for r in res] == ["a", "a"]
    assert res[1]["images"][0].startswith(str(tmp_path / "gen"))
    job = [os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))][0]
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert sorted(e["op"] for e in errors) == [NAME] * 2
    text = json.dumps(errors)
    assert "nope.png" in text and "junk.png" in text
