"""The third round of model ops on Ray: run in actor pools, same output as the default executor."""
import pytest

from tests.conftest import read_jsonl
from tests.models.tiny_models_a import models_a, models_a_env  # noqa: F401
from tests.models.vision_tiny_models import vision_models, write_images  # noqa: F401

IMG, EOC = "<__dj__image>", "<|__dj__eoc|>"
MANY = "a red cat, the mat, the big dog, a park, a blue bike and an old book"


@pytest.mark.slow
def test_phrase_grounding_recall_same_on_ray(run_both, models_a_env, tmp_path):
    models_a_env("nltk_tagger", "google/owlvit-base-patch32")
    imgs = write_images(tmp_path / "imgs", 3)
    rows = [{"id": 0, "text": f"{IMG} a red cat on the mat{EOC}{IMG}{IMG} {MANY}", "images": imgs},
            {"id": 1, "text": "no images", "images": []},
            {"id": 2, "text": f"{IMG} !{EOC}{IMG} {MANY}", "images": imgs[:2]},
            {"id": 3, "text": f"{IMG} {MANY}", "images": [imgs[1]]}]
    process = [{"phrase_grounding_recall_filter": {"min_recall": 0.4, "accelerator": "cpu"}}]
    default, ray = run_both(rows, process, keep_stats_in_res_ds=True)
    a, b = read_jsonl(default / "result.jsonl"), read_jsonl(ray / "result.jsonl")
    # row 3: 2 of 6 phrases found on img1 (see the op's tests), below 0.4
    assert [r["id"] for r in a] == [r["id"] for r in b] == [0, 1, 2]
    for ra, rb in zip(a, b):
        sa = ra["__dj__stats__"]["phrase_grounding_recall"]
        sb = rb["__dj__stats__"]["phrase_grounding_recall"]
        assert sa == pytest.approx(sb, abs=1e-9) if sa else sa == sb == []
    assert a[0]["__dj__stats__"]["phrase_grounding_recall"] == pytest.approx([1.0, (2 / 6 + 3 / 6) / 2])


@pytest.mark.slow
def test_detect_main_character_same_on_ray(run_both, models_a_env, tmp_path):
    models_a_env("tiny/llava")
    imgs = write_images(tmp_path / "imgs", 2)
    rows = [{"id": k, "text": f"picture {k}", "images": [p]} for k, p in enumerate(imgs)]
    rows.append({"id": 2, "text": "none", "images": []})
    process = [{"detect_main_character_mapper": {"mllm_mapper_args": {"hf_model": "tiny/llava", "max_new_tokens": 4},
                                                 "accelerator": "cpu"}}]
    default, ray = run_both(rows, process, keep_stats_in_res_ds=True)
    a, b = read_jsonl(default / "result.jsonl"), read_jsonl(ray / "result.jsonl")
    assert [r["id"] for r in a] == [r["id"] for r in b] == [0, 1, 2]
    assert [r["__dj__meta__"] for r in a] == [r["__dj__meta__"] for r in b] == [{"main_character_list": []}] * 3
