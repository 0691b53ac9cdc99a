import json
import os

import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.tiny_models_a import models_a, models_a_env  # noqa: F401
from tests.models.vision_tiny_models import no_models, vision_models  # noqa: F401
from tests.ops.vision_other_helpers import dry_run

NAME = "video_captioning_from_audio_mapper"
MODEL = "Qwen/Qwen-Audio"
VID, EOC = "<__dj__video>", "<|__dj__eoc|>"


def test_clean_response():
    from data_juicer.ops.mapper.video_captioning_from_audio_mapper import PROMPT, clean_response

    raw = f"<audio>/tmp/a_0.mp3</audio>{PROMPT} a dog barks <|endoftext|>"
    assert clean_response(raw, "/tmp/a_0.mp3") == "a dog barks"
    assert clean_response("<|caption|>", "x") == ""
    assert PROMPT == "<|startoftranscription|><|unknown|><|caption|><|unknown|><|notimestamps|><|wo_itn|>"


def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/Qwen/Qwen-Audio" in str(e.value) and "needed by " + NAME in str(e.value)


def test_missing_model_under_dry_run(no_models, make_recipe, capsys):
    rc, out = dry_run(make_recipe, [{NAME: {}}], capsys=capsys)
    assert rc == 2
    assert f"{no_models}/Qwen/Qwen-Audio" in out


def test_rows_without_videos_add_no_sample(models_a_env):
    models_a_env(MODEL)
    op = OPERATORS.get(NAME)()
    assert (op.keep_original_sample, op.memory, op.accelerator) == (True, "30GB", "cuda")
    rows = {"text": ["no video"], "videos": [[]], Fields.stats: [{}]}
    assert op.process_batched(dict(rows))["text"] == ["no video"]
    assert OPERATORS.get(NAME)(keep_original_sample=False).process_batched(dict(rows))["text"] == []


@pytest.mark.slow
def test_captions_videos_with_audio(models_a_env, video_files):
    models_a_env(MODEL)
    op = OPERATORS.get(NAME)()
    with_audio, silent = video_files["audio"], video_files["motion"]
    rows = {"text": [f"{VID} a {VID} b{EOC}  {EOC}{VID} c", "none"], "videos": [[with_audio, silent, with_audio], []],
            Fields.stats: [{}, {}]}
    out = op.process_batched(rows)
    assert len(out["text"]) == 3 and out["text"][0] == rows["text"][0] and out["text"][2] == "none"
    new = out["text"][1]
    # chunk 1: the silent video is left out; the blank chunk is dropped; chunk 3: the second audio
    first, second, rest = new.split(EOC)
    assert rest == "" and first.startswith(f"{VID} ") and first.count(VID) == 1 and second.count(VID) == 1
    caption = first[len(VID) + 1:]
    assert caption and "<|" not in caption and "mp3" not in caption and "audio" not in caption
    assert second == f"{VID} {caption}"  # the same audio, greedy decoding: the same caption
    assert out["videos"] == [[with_audio, silent, with_audio], [with_audio, with_audio], []]


@pytest.mark.slow
def test_end_to_end_bad_videos_go_to_the_ledger(models_a_env, video_files, tmp_path, make_recipe):
    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    models_a_env(MODEL)
    rows = [{"id": "a", "text": f"{VID} x", "videos": [video_files["audio"]]},
            {"id": "gone", "text": f"{VID} x", "videos": [video_files["missing"]]},
            {"id": "junk", "text": f"{VID} x", "videos": [video_files["corrupt"]]}]
    recipe = make_recipe(rows, [{NAME: {"keep_original_sample": False}}])
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = read_jsonl(out / "result.jsonl")
    assert [r["id"] for r in res] == ["a"] and res[0]["text"].startswith(f"{VID} ") and res[0]["text"].endswith(EOC)
    job = next(os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert sorted(e["op"] for e in errors) == [NAME] * 2
    text = json.dumps(errors)
    assert "does_not_exist.mp4" in text and "corrupt.mp4" in text
