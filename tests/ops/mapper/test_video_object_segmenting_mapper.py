"""video_object_segmenting_mapper: YOLOE first-frame proposals tracked by SAM2.

The slow tests run the real loading, pre-processing, propagation and post-processing code on a
tiny seeded SAM2 video model (tests/models/tiny_sam2_models.py) and a tiny seeded YOLOE
(tests/models/tiny_models_b.py). The literal mask values below are the ones Data-Juicer 1.6.1's
own op gives on the same model files and video (benchmarks/sam2/README.md: identical masks,
logits within 2e-9).
"""
import json
import os

import numpy as np
import pytest

from data_juicer.models.loader import clear_models
from data_juicer.utils.constant import Fields, MetaKeys
from tests.conftest import read_jsonl
from tests.models.vision_tiny_models import no_models  # noqa: F401
from tests.ops.vision_other_helpers import dry_run, write_video

OP = "video_object_segmenting_mapper"
TAG = MetaKeys.video_object_segment_tags
EMPTY = {"segment_data": [], "cls_id_dict": [], "object_cls_list": [], "yoloe_conf_list": []}
SAM2 = "facebook/sam2.1-hiera-tiny"


def _op(**kw):
    from data_juicer.ops.registry import OPERATORS

    return OPERATORS.get(OP)(**kw)


def _dummy_models(folder) -> str:
    """Model files that exist but are never loaded (nothing to segment)."""
    os.makedirs(os.path.join(folder, SAM2), exist_ok=True)
    for n in ("yoloe-11l-seg.pt", "mobileclip_blt.ts"):
        with open(os.path.join(folder, n), "wb") as f:
            f.write(b"not a model")
    return str(folder)


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    """Tiny SAM2 (as facebook/sam2.1-hiera-tiny) + tiny YOLOE with its text encoder, one folder."""
    from tests.models.tiny_models_b import build_yoloe
    from tests.models.tiny_sam2_models import build_sam2_video

    root = tmp_path_factory.mktemp("sam2_models")
    build_sam2_video(str(root / SAM2))
    build_yoloe(str(root), seed=1, std=0.3)  # its confidences on the test video: 0.9935, 0.9857, 0.9842, 0.976...
    return str(root)


@pytest.fixture
def models_dir(tiny_models, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", tiny_models)
    clear_models()
    yield tiny_models
    clear_models()


# -- fast --------------------------------------------------------------------------------------

def test_missing_models_name_every_path(no_models, tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        _op()
    assert f"{no_models}/yoloe-11l-seg.pt" in str(e.value)
    (tmp_path / "w").mkdir()
    for n in ("my-yoloe.pt", "mobileclip_blt.ts"):
        (tmp_path / "w" / n).write_bytes(b"x")
    with pytest.raises(FileNotFoundError) as e:  # YOLOE found: next the SAM2 model
        _op(yoloe_path=str(tmp_path / "w" / "my-yoloe.pt"))
    msg = str(e.value)
    assert SAM2 in msg and f"{no_models}/{SAM2}" in msg and "Hugging Face cache" in msg
    with pytest.raises(FileNotFoundError, match="sam2_hf_model"):
        _op(yoloe_path=str(tmp_path / "w" / "my-yoloe.pt"), sam2_hf_model=str(tmp_path / "nowhere"))


def test_missing_model_under_dry_run(no_models, make_recipe, capsys):
    rc, out = dry_run(make_recipe, [{OP: {}}], capsys=capsys)
    assert rc != 0
    assert f"{no_models}/yoloe-11l-seg.pt" in out


def test_params_defaults_and_bad_values(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", _dummy_models(tmp_path))
    op = _op()
    assert (op.sam2_hf_model, op.yoloe_path, op.yoloe_conf, op.torch_dtype, op.if_binarize,
            op.if_save_visualization, op.accelerator) == (SAM2, "yoloe-11l-seg.pt", 0.5, "bf16", True, False, "cuda")
    assert str(op.save_visualization_dir).endswith(os.path.join("data_juicer", "assets"))
    assert _op(if_binarize=False).if_binarize is False
    assert _op(if_binarize=False, if_save_visualization=True).if_binarize is True  # forced, as Data-Juicer
    with pytest.raises(ValueError, match="torch_dtype must be one of fp32, fp16, bf16"):
        _op(torch_dtype="int8")


def test_dtype_choice():
    import torch

    from data_juicer.models.sam2_video import pick_dtype

    assert [pick_dtype(d, "cpu") for d in ("fp32", "fp16", "bf16")] == [torch.float32] * 3
    if torch.cuda.is_available():
        assert pick_dtype("fp16", "cuda") == torch.float16
        assert pick_dtype("bf16", "cuda") == (torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32)


def test_rows_without_video_or_characters_and_tagged_rows_load_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", _dummy_models(tmp_path))  # never loaded: nothing to segment
    out = _op().process_batched({
        "videos": [[], ["x.mp4"], ["y.mp4"]],
        "main_character_list": [["dog"], [], ["cat"]],
        Fields.meta: [{}, {}, {TAG: {"done": 1}}]})
    assert out[Fields.meta] == [{TAG: EMPTY}, {TAG: EMPTY}, {TAG: {"done": 1}}]


def test_missing_and_corrupt_videos_are_clear_errors(tmp_path, monkeypatch):
    from data_juicer.media.video import VideoError

    monkeypatch.setenv("DJ_MODELS_DIR", _dummy_models(tmp_path))
    op = _op()
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "gone.mp4")):
        op.process_batched({"videos": [[str(tmp_path / "gone.mp4")]], "main_character_list": [["dog"]]})
    (tmp_path / "bad.mp4").write_bytes(b"not a video at all")
    with pytest.raises(VideoError, match="bad.mp4"):
        op.process_batched({"videos": [[str(tmp_path / "bad.mp4")]], "main_character_list": [["dog"]]})


def test_frames_are_every_decoded_rgb_frame(tmp_path):
    from data_juicer.ops.mapper.video_object_segmenting_mapper import jpeg_roundtrip, video_frames

    v = write_video(str(tmp_path / "v.mp4"), frames=5, w=64, h=48)
    frames = video_frames(v)
    assert len(frames) == 5 and frames[0].shape == (48, 64, 3) and frames[0].dtype == np.uint8
    assert len(video_frames(v, limit=1)) == 1
    # the square (220) on the background (40), moving right 4 px a frame
    assert abs(int(frames[0][24, 16, 0]) - 220) <= 6 and abs(int(frames[0][4, 4, 0]) - 40) <= 6
    assert abs(int(frames[4][24, 36, 0]) - 220) <= 6 and abs(int(frames[0][24, 36, 0]) - 40) <= 6
    img = jpeg_roundtrip(frames[0])  # what YOLOE sees: the JPEG (quality 95) of the first frame
    assert img.size == (64, 48) and np.abs(np.asarray(img).astype(int) - frames[0]).max() <= 12


# -- slow: the tiny models ---------------------------------------------------------------------

# Data-Juicer 1.6.1 on the same files: mask pixels per frame and object (48 x 64 frames)
MASK_SUMS = [[1655, 2004, 1626], [1888, 1874, 1885], [1879, 1874, 1879], [1924, 1918, 1924], [1922, 1915, 1922]]
CONFS = [0.993509829044342, 0.9856868386268616, 0.9841567873954773]


@pytest.mark.slow
def test_tiny_models_tag_values(models_dir, tmp_path):
    v = write_video(str(tmp_path / "v.mp4"), frames=5, w=64, h=48)
    out = _op(yoloe_conf=0.98, accelerator="cpu").process_batched(
        {"videos": [[v]], "main_character_list": [["dog", "red car"]]})
    tag = out[Fields.meta][0][TAG]
    assert tag["cls_id_dict"] == ["dog", "red car"]
    assert tag["object_cls_list"] == [0, 0, 0]
    np.testing.assert_allclose(tag["yoloe_conf_list"], CONFS, atol=1e-6)
    masks = np.array(tag["segment_data"])
    assert masks.shape == (5, 3, 1, 48, 64) and masks.dtype == bool
    assert masks.sum(axis=(2, 3, 4)).tolist() == MASK_SUMS


@pytest.mark.slow
def test_tiny_models_batch_equals_one_by_one_and_nothing_found(models_dir, tmp_path):
    vids = [write_video(str(tmp_path / f"v{k}.mp4"), frames=4, w=64, h=48, moving=bool(k)) for k in range(2)]
    op = _op(yoloe_conf=0.98, accelerator="cpu")
    batch = op.process_batched({"videos": [[vids[0]], [vids[1]], [vids[0]]],
                                "main_character_list": [["dog", "red car"], ["dog", "red car"], []]})
    tags = [m[TAG] for m in batch[Fields.meta]]
    for k in range(2):
        alone = op.process_batched({"videos": [[vids[k]]], "main_character_list": [["dog", "red car"]]})
        one = alone[Fields.meta][0][TAG]
        # YOLOE on two frames at once: the same boxes, confidences within float rounding (~1e-7)
        assert {x: one[x] for x in one if x != "yoloe_conf_list"} == \
            {x: tags[k][x] for x in tags[k] if x != "yoloe_conf_list"}
        np.testing.assert_allclose(one["yoloe_conf_list"], tags[k]["yoloe_conf_list"], atol=1e-6)
    assert tags[2] == EMPTY and len(tags[0]["segment_data"]) == 4
    none = _op(yoloe_conf=0.999, accelerator="cpu").process_batched(
        {"videos": [[vids[0]]], "main_character_list": [["dog", "red car"]]})
    assert none[Fields.meta][0][TAG] == EMPTY  # no box above the threshold: empty, as Data-Juicer


@pytest.mark.slow
def test_tiny_models_logits_and_visualization(models_dir, tmp_path):
    v = write_video(str(tmp_path / "clip.mp4"), frames=3, w=64, h=48)
    logits = _op(yoloe_conf=0.98, if_binarize=False, accelerator="cpu").process_batched(
        {"videos": [[v]], "main_character_list": [["dog", "red car"]]})[Fields.meta][0][TAG]
    x = np.array(logits["segment_data"])
    assert x.shape == (3, 3, 1, 48, 64) and x.dtype == np.float64
    binar = _op(yoloe_conf=0.98, accelerator="cpu", if_save_visualization=True,
                save_visualization_dir=str(tmp_path / "vis")).process_batched(
        {"videos": [[v]], "main_character_list": [["dog", "red car"]]})[Fields.meta][0][TAG]
    assert ((x > 0) == np.array(binar["segment_data"])).all()  # binarized = logits above 0
    files = sorted(os.listdir(tmp_path / "vis"))
    assert len(files) == 9 and all(f.startswith("clip_mask_") and f.endswith(".jpg") for f in files)
    from PIL import Image

    name = next(f for f in files if f.startswith("clip_mask_1_2_"))  # object 1, frame 2
    img = np.asarray(Image.open(tmp_path / "vis" / name))
    assert img.shape == (48, 64, 3)
    on = np.array(binar["segment_data"][2][1][0])
    assert abs(int(img[on].mean()) - 225) <= 12 and (img[~on].mean() if (~on).any() else 0) < 30


@pytest.mark.slow
def test_dj_process_bad_video_goes_to_ledger(models_dir, tmp_path, make_recipe):
    from data_juicer.cli.process import main

    good = write_video(str(tmp_path / "good.mp4"), frames=3, w=64, h=48)
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video")
    rows = [{"text": "a", "videos": [good], "main_character_list": ["dog", "red car"]},
            {"text": "b", "videos": [str(bad)], "main_character_list": ["dog"]},
            {"text": "c", "videos": [str(tmp_path / "missing.mp4")], "main_character_list": ["dog"]}]
    recipe = make_recipe(rows=rows, process=[{OP: {"yoloe_conf": 0.98, "accelerator": "cpu"}}],
                         keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["text"] for r in out] == ["a"]
    assert np.array(out[0][Fields.meta][TAG]["segment_data"]).shape == (3, 3, 1, 48, 64)
    errors = [e for p in (tmp_path / "out").rglob("errors.jsonl") for e in read_jsonl(p)]
    assert len(errors) == 2 and {e["op"] for e in errors} == {OP}
    text = json.dumps(errors)
    assert "bad.mp4" in text and "missing.mp4" in text
