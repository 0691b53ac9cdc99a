import json
import os

import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.tiny_models_a import models_a, models_a_env  # noqa: F401
from tests.models.vision_tiny_models import no_models, vision_models, write_images  # noqa: F401
from tests.ops.vision_other_helpers import dry_run

NAME = "video_captioning_from_video_mapper"
MODEL = "kpyu/video-blip-opt-2.7b-ego4d"
VID, EOC = "<__dj__video>", "<|__dj__eoc|>"


def _op(**kw):
    op = OPERATORS.get(NAME)(**kw)
    op.generate_kwargs["max_new_tokens"] = 4  # random weights never stop early: keep generation short
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
    assert f"looked at: {no_models}/kpyu/video-blip-opt-2.7b-ego4d" in str(e.value)
    assert "needed by video_captioning_from_video_mapper" in str(e.value)


def test_missing_model_under_dry_run(no_models, make_recipe, capsys):
    rc, out = dry_run(make_recipe, [{NAME: {}}], capsys=capsys)
    assert rc == 2
    assert f"{no_models}/kpyu/video-blip-opt-2.7b-ego4d" in out


def test_defaults(models_a_env):
    models_a_env(MODEL)
    op = OPERATORS.get(NAME)()
    assert (op.hf_video_blip, op.caption_num, op.keep_candidate_mode, op.frame_sampling_method, op.frame_num,
            op.text_update_strategy, op.legacy_split_by_text_token, op.num_newly_generated_samples, op.memory,
            op.accelerator) == (MODEL, 1, "random_any", "all_keyframes", 3, "rewrite", True, 1, "20GB", "cuda")
    assert op.generate_kwargs == {"num_beams": 4, "max_new_tokens": 128, "temperature": 0.7, "top_p": 0.9,
                                  "repetition_penalty": 1.5, "do_sample": True}
    assert OPERATORS.get(NAME)(caption_num=3, keep_candidate_mode="all").num_newly_generated_samples == 3


def test_rows_without_videos_add_no_sample(models_a_env):
    models_a_env(MODEL)
    rows = {"text": ["no video", "neither"], "videos": [[], []], Fields.stats: [{}, {}]}
    assert _op().process_batched({k: list(v) for k, v in rows.items()})["text"] == ["no video", "neither"]
    assert _op(keep_original_sample=False).process_batched(rows) == {"text": [], "videos": [], Fields.stats: []}


@pytest.mark.slow
def test_video_vision_tower_sees_every_frame(models_a_env):
    """The clip's features are its frames' BLIP-2 ViT features side by side."""
    import torch

    from data_juicer.models.video_blip import load_video_blip

    models_a_env(MODEL)
    model, proc = load_video_blip(MODEL, who=NAME)
    assert type(model).__name__ == "VideoBlipForConditionalGeneration"
    assert proc.num_query_tokens == 4 and model.config.image_token_index == proc.tokenizer.convert_tokens_to_ids(
        "<image>")
    from transformers import Blip2VisionModel

    torch.manual_seed(0)
    clips = torch.randn(2, 3, 3, 32, 32)  # (batch, channels, time, H, W)
    with torch.no_grad():
        out = model.vision_model(pixel_values=clips)
        # BLIP-2's own ViT forward, with the same weights, on frame 2 of clip 1 alone
        frame = Blip2VisionModel.forward(model.vision_model, pixel_values=clips[1, :, 2].unsqueeze(0)).last_hidden_state[0]
    assert tuple(out.last_hidden_state.shape) == (2, 3 * 17, 32)  # 16 patches + CLS per frame
    assert tuple(out.pooler_output.shape) == (2, 3, 32)
    assert torch.allclose(out.last_hidden_state[1, 2 * 17:3 * 17], frame, atol=1e-5)


@pytest.mark.slow
def test_captions_of_uniform_frames(models_a_env, video_files):
    import torch

    models_a_env(MODEL)
    a, b, c = video_files["motion"], video_files["scenes"], video_files["short"]
    rows = {"text": [f"{VID}{VID} two{EOC} tail", "none", f"{VID} one"], "videos": [[a, b], [], [c]],
            Fields.stats: [{"x": 1}, {}, {}]}
    torch.manual_seed(0)
    out = _op(frame_sampling_method="uniform", frame_num=2).process_batched(rows)
    assert len(out["text"]) == 5
    assert out["text"][0] == rows["text"][0] and out["text"][2] == "none" and out["text"][3] == f"{VID} one"
    # one caption per video (no '. ' joining of frame captions), after its own token, chunk closed
    new1, new2 = out["text"][1], out["text"][4]
    assert new1.startswith(f"{VID} ") and new1.endswith(f" {EOC}") and new1.count(VID) == 2
    assert new2.startswith(f"{VID} ") and new2.endswith(f" {EOC}") and new2.count(VID) == 1
    assert "tail" not in new1 and "two" not in new1
    assert out["videos"] == [[a, b], [a, b], [], [c], [c]]
    assert out[Fields.stats][1] == {"x": 1} and out[Fields.stats][1] is not rows[Fields.stats][0]


@pytest.mark.slow
def test_frame_field_prompt_and_candidates(models_a_env, tmp_path):
    import torch

    models_a_env(MODEL)
    frames = write_images(tmp_path, 6)
    rows = {"text": [f"{VID} clip one{EOC}", f"{VID}{VID} two", "none"], "videos": [["a.mp4"], ["b.mp4", "c.mp4"], []],
            "frames": [[frames[:3]], [frames[3:5], [frames[5]]], []], Fields.stats: [{}, {}, {}]}
    torch.manual_seed(0)
    out = _op(frame_field="frames", frame_num=2, prompt="a video of", caption_num=2,
              keep_candidate_mode="all").process_batched({k: list(v) for k, v in rows.items()})
    # original, then one new sample per candidate; each caption starts with the prompt (OPT echoes it)
    assert [t.count(VID) for t in out["text"]] == [1, 1, 1, 2, 2, 2, 0]
    assert out["text"][1] != out["text"][2]  # two sampled candidates
    for t in out["text"][1:3] + out["text"][4:6]:
        assert t.startswith(f"{VID} a video of") and t.endswith(f" {EOC}")
        assert t.count(f"{VID} a video of") == t.count(VID)
    # keep_origin: the text is kept, the captions of all videos go to caption_field
    torch.manual_seed(0)
    kept = _op(frame_field="frames", frame_num=2, legacy_split_by_text_token=False, text_update_strategy="keep_origin",
               caption_field="caps", keep_original_sample=False).process_batched({k: list(v) for k, v in rows.items()})
    assert kept["text"] == rows["text"][:2] and [len(c) for c in kept["caps"]] == [1, 2]
    assert all(isinstance(c, str) and c for caps in kept["caps"] for c in caps)
    # rewrite without legacy splitting: "<video>cap1 <video>cap2<eoc>"
    torch.manual_seed(0)
    rew = _op(frame_field="frames", frame_num=2, legacy_split_by_text_token=False,
              keep_original_sample=False).process_batched({k: list(v) for k, v in rows.items()})
    assert rew["text"][1].startswith(VID) and rew["text"][1].endswith(EOC) and rew["text"][1].count(VID) == 2


@pytest.mark.slow
def test_end_to_end_bad_videos_go_to_the_ledger(models_a_env, video_files, tmp_path, make_recipe):
    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    models_a_env(MODEL)
    rows = [{"id": "a", "text": f"{VID} x", "videos": [video_files["short"]]},
            {"id": "gone", "text": f"{VID} x", "videos": [video_files["missing"]]},
            {"id": "junk", "text": f"{VID} x", "videos": [video_files["corrupt"]]}]
    recipe = make_recipe(rows, [{NAME: {"frame_sampling_method": "uniform", "frame_num": 2}}])
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
