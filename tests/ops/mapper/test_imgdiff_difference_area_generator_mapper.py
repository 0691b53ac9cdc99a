import json
import os

import numpy as np
import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys
from tests.conftest import read_jsonl
from tests.models.vision_tiny_models import models_env, no_models, vision_models, write_images  # noqa: F401

NAME = "imgdiff_difference_area_generator_mapper"
KEY = MetaKeys.bbox_tag
SEG = {"imgsz": 64, "conf": 0.0}


@pytest.fixture
def imgdiff_env(models_env):
    """Tiny CLIP + BLIP ITM + FastSAM + NLTK tagger + WordNet noun index in ``DJ_MODELS_DIR``."""
    from tests.models.tiny_models_a import tiny_pos_tagger
    from tests.models.tiny_models_b import build_wordnet_nouns
    from tests.models.tiny_other_models import build_fastsam

    root = models_env("openai/clip-vit-base-patch32", "Salesforce/blip-itm-base-coco")
    if not os.path.exists(os.path.join(root, "FastSAM-x.pt")):
        build_fastsam(root, std=0.3)
        tiny_pos_tagger(os.path.join(root, "nltk_data"))
        build_wordnet_nouns(os.path.join(root, "nltk_data"))
    return root


def _pair(tmp_path, seed=0):
    a, b = write_images(tmp_path / f"p{seed}", 2, seed=seed, size=(64, 48))
    return a, b


def test_missing_models_name_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"{no_models}/openai/clip-vit-base-patch32" in str(e.value)


def test_caption_nouns_and_iou_filter(tmp_path):
    from data_juicer.models.wordnet_nouns import NounLemmatizer
    from data_juicer.ops.mapper.imgdiff_difference_area_generator_mapper import caption_nouns, iou_filter
    from tests.models.tiny_models_b import build_wordnet_nouns

    lem = NounLemmatizer(build_wordnet_nouns(str(tmp_path))).lemmatize
    assert [lem(w) for w in ("cats", "mice", "boxes", "glasses", "runs")] == ["cat", "mouse", "box", "glass", "runs"]

    def tag(words):  # a tagger that knows two nouns
        return [(w, "NN" if w in ("cat", "dog", "mouse") else "VB") for w in words]

    assert caption_nouns("A red cat sits.", "a red dog sits", lem, tag) == (["cat"], ["dog"])
    assert caption_nouns("two cats run", "two mice run", lem, tag) == (["cat"], ["mouse"])
    assert caption_nouns("same words", "same words", lem, tag) == ([], [])
    boxes = np.array([[10, 10, 10, 10], [11, 10, 10, 10], [40, 40, 4, 4]], dtype=float)
    assert iou_filter(boxes, 0.5).tolist() == [[10, 10, 10, 10], [40, 40, 4, 4]]


@pytest.mark.slow
def test_params_and_rejected_pair(imgdiff_env, tmp_path):
    a, b = _pair(tmp_path)
    op = OPERATORS.get(NAME)(image_pair_similarity_filter_args={"min_score_1": 1.01 - 1e-9, "max_score_1": 1.0},
                             image_segment_mapper_args=SEG, accelerator="cpu")
    assert (op.scores_2, op.seg.imgsz, op.seg.conf, op.itm.min_score, op.sim.hf_clip) == \
        ((0.1, 1.0), 64, 0.0, 0.1, "openai/clip-vit-base-patch32")
    out = op.process_batched({"caption1": ["a red cat"], "caption2": ["a red dog"], "image_path1": [a],
                              "image_path2": [b], "id": [7]})
    assert out[Fields.meta][0][KEY] == [[0.0, 0.0, 0.0, 0.0]] and out["id"] == [7]


@pytest.mark.slow
def test_tiny_models_boxes(imgdiff_env, tmp_path):
    a, b = _pair(tmp_path)
    c, d = _pair(tmp_path, seed=3)
    wide = {"min_score_1": 0.0, "max_score_1": 1.0, "min_score_2": 0.0, "max_score_2": 1.0}
    op = OPERATORS.get(NAME)(image_pair_similarity_filter_args=wide, image_segment_mapper_args=SEG,
                             image_text_matching_filter_args={"min_score": 0.0}, accelerator="cpu")
    batch = {"caption1": ["a red cat sits on the mat", "same words"], "caption2": ["a red dog sits on the mat",
                                                                                 "same words"],
             "image_path1": [a, c], "image_path2": [b, d]}
    metas = op.process_batched(batch)[Fields.meta]
    boxes = metas[0][KEY]
    # the seeded tiny FastSAM's segments whose crops match "cat" (image 1) and "dog" (image 2)
    np.testing.assert_allclose(boxes, [[57.836445, 37.886211, 12.32711, 20.227577],
                                       [2.173625, 10.073244, 4.347251, 20.146488],
                                       [6.103518, 6.216948, 12.207037, 12.433895]], atol=1e-3)
    # no caption nouns differ: no region matches
    assert metas[1][KEY] == [[0.0, 0.0, 0.0, 0.0]]
    # batched equals alone
    alone = op.process_batched({k: v[:1] for k, v in batch.items()})[Fields.meta][0][KEY]
    np.testing.assert_allclose(alone, boxes, atol=1e-4)


@pytest.mark.slow
def test_dj_process_missing_image_goes_to_the_ledger(imgdiff_env, tmp_path, make_recipe):
    from data_juicer.cli.process import main

    a, b = _pair(tmp_path)
    rows = [{"id": "a", "text": "", "caption1": "a cat", "caption2": "a dog", "image_path1": a, "image_path2": b},
            {"id": "bad", "text": "", "caption1": "a cat", "caption2": "a dog", "image_path1": a,
             "image_path2": str(tmp_path / "no.png")}]
    recipe = make_recipe(rows, [{NAME: {"image_segment_mapper_args": SEG, "accelerator": "cpu"}}],
                         keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    res = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["id"] for r in res] == ["a"] and len(res[0][Fields.meta][KEY][0]) == 4
    errors = [e for p in (tmp_path / "out").rglob("errors.jsonl") for e in read_jsonl(p)]
    assert len(errors) == 1 and errors[0]["op"] == NAME and "no.png" in json.dumps(errors[0])
