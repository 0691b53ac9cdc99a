import json
import os

import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401
from tests.ops.vision_other_helpers import dry_run

NAME = "video_captioning_from_frames_mapper"
MODEL = "tiny/blip-image-captioning"
VID, EOC = "<__dj__video>", "<|__dj__eoc|>"


def _op(**kw):
    op = OPERATORS.get(NAME)(hf_img2seq=MODEL, **kw)
    op.max_new_tokens = 4  # random weights never stop early: keep generation short
    return op


def test_bad_params_are_rejected(no_models):
    with pytest.raises(ValueError, match=r"Keep strategy \[best\]"):
        OPERATORS.get(NAME)(keep_candidate_mode="best")
    with pytest.raises(ValueError, match=r"Frame sampling method \[every\]"):
        OPERATORS.get(NAME)(frame_sampling_method="every")
    with pytest.raises(ValueError, match="caption_field"):
        OPERATORS.get(NAME)(text_update_strategy="keep_origin", keep_original_sample=False)
    with pytest.raises(ValueError, match="only one of `caption_field` and `keep_original_sample`"):
        OPERATORS.get(NAME)(caption_field="caps")
    with pytest.raises(ValueError, match="legacy_split_by_text_token"):
        OPERATORS.get(NAME)(caption_num=2, keep_candidate_mode="all", legacy_split_by_text_token=False)


def test_missing_default_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/Salesforce/blip2-opt-2.7b" in str(e.value)


def test_missing_model_under_dry_run(no_models, make_recipe, capsys):
    rc, out = dry_run(make_recipe, [{NAME: {}}], capsys=capsys)
    assert rc == 2
    assert f"{no_models}/Salesforce/blip2-opt-2.7b" in out


def test_defaults(models_env):
    models_env(MODEL)
    op = OPERATORS.get(NAME)(hf_img2seq=MODEL)
    assert (op.caption_num, op.keep_candidate_mode, op.frame_sampling_method, op.frame_num, op.text_update_strategy,
            op.legacy_split_by_text_token, op.num_newly_generated_samples, op.memory, op.accelerator) == \
        (1, "random_any", "all_keyframes", 3, "rewrite", True, 1, "20GB", "cuda")
    assert OPERATORS.get(NAME)(hf_img2seq=MODEL, caption_num=3, keep_candidate_mode="all") \
        .num_newly_generated_samples == 3


def test_frame_field_picks_evenly_spread_frames():
    from data_juicer.ops.common.frame_captions import pick_frame_paths

    paths = [f"f{k}.jpg" for k in range(7)]
    assert pick_frame_paths(paths, 3) == ["f0.jpg", "f3.jpg", "f6.jpg"]
    assert pick_frame_paths(paths, 2) == ["f0.jpg", "f6.jpg"]
    assert pick_frame_paths(paths, 9) == paths


def test_rows_without_videos_add_no_sample(models_env):
    models_env(MODEL)
    rows = {"text": ["no video", "neither"], "videos": [[], []], Fields.stats: [{}, {}]}
    assert _op().process_batched({k: list(v) for k, v in rows.items()})["text"] == ["no video", "neither"]
    assert _op(keep_original_sample=False).process_batched(rows) == {"text": [], "videos": [], Fields.stats: []}


@pytest.mark.slow
def test_captions_of_uniform_frames_in_chunks(models_env, video_files):
    import torch

    models_env(MODEL)
    a, b, c = video_files["motion"], video_files["scenes"], video_files["short"]
    rows = {"text": [f"{VID}{VID} two{EOC} tail", "none", f"{VID} one"], "videos": [[a, b], [], [c]],
            Fields.stats: [{"x": 1}, {}, {}]}
    torch.manual_seed(0)
    out = _op(frame_sampling_method="uniform", frame_num=2).process_batched(rows)
    assert out["text"] == [
        f"{VID}{VID} two{EOC} tail",
        f"{VID} necessarily ferrer trained sharply. meath victoria ethnic yong "
        f"{VID} ##iana disease omittedked. textures traitorais frankfurt {EOC}",
        "none",
        f"{VID} one",
        f"{VID} skies bane aaron坂. рasse adjust р {EOC}",
    ]
    assert out["videos"] == [[a, b], [a, b], [], [c], [c]]
    assert out[Fields.stats][1] == {"x": 1} and out[Fields.stats][1] is not rows[Fields.stats][0]


@pytest.mark.slow
def test_frame_field_rewrite_and_keep_origin(models_env, tmp_path):
    import torch

    models_env(MODEL)
    frames = write_images(tmp_path, 5)
    rows = {"text": [f"{VID} clip"], "videos": [["unused.mp4"]], "frames": [[frames]], Fields.stats: [{}]}
    torch.manual_seed(0)
    out = _op(frame_field="frames", frame_num=2, legacy_split_by_text_token=False).process_batched(dict(rows))
    assert out["text"][0] == rows["text"][0]
    torch.manual_seed(0)
    kept = _op(frame_field="frames", frame_num=2, legacy_split_by_text_token=False,
               text_update_strategy="keep_origin", caption_field="caps",
               keep_original_sample=False).process_batched(dict(rows))
    # the same frames (first and last of five) with the same seed: the same caption in both layouts
    assert len(kept["caps"]) == 1 and len(kept["caps"][0]) == 1
    cap = kept["caps"][0][0]
    assert out["text"][1] == f"{VID}{cap}{EOC}"
    assert kept["text"] == [rows["text"][0]]
    assert cap.count(". ") == 1
    torch.manual_seed(0)
    one = _op(frame_field="frames", frame_num=1, legacy_split_by_text_token=False,
              text_update_strategy="keep_origin", caption_field="caps",
              keep_original_sample=False).process_batched(dict(rows))
    assert ". " not in one["caps"][0][0]


@pytest.mark.slow
def test_end_to_end_bad_videos_go_to_the_ledger(models_env, video_files, tmp_path, make_recipe):
    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    models_env(MODEL)
    rows = [{"id": "a", "text": f"{VID} x", "videos": [video_files["short"]]},
            {"id": "gone", "text": f"{VID} x", "videos": [video_files["missing"]]},
            {"id": "junk", "text": f"{VID} x", "videos": [video_files["corrupt"]]}]
    recipe = make_recipe(rows, [{NAME: {"hf_img2seq": MODEL, "frame_sampling_method": "uniform",
                                        "frame_num": 1}}])
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = read_jsonl(out / "result.jsonl")
    assert [r["id"] for r in res] == ["a", "a"]
    assert res[1]["text"].startswith(f"{VID} ") and res[1]["text"].endswith(f" {EOC}")
    job = [os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))][0]
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert sorted(e["op"] for e in errors) == [NAME] * 2
    text = json.dumps(errors)
    assert "does_not_exist.mp4" in text and "corrupt.mp4" in text
