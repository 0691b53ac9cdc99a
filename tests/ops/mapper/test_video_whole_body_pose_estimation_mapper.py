import json
import os

import numpy as np
import pytest

from data_juicer.models.loader import clear_models
from data_juicer.utils.constant import Fields, MetaKeys
from tests.conftest import read_jsonl
from tests.ops.vision_other_helpers import dry_run, write_video

OP = "video_whole_body_pose_estimation_mapper"
TAG = MetaKeys.pose_estimation_tags
KEYS = ["body_keypoints", "foot_keypoints", "faces_keypoints", "hands_keypoints", "bbox_results_list"]


def _op(**kw):
    from data_juicer.ops.registry import OPERATORS

    return OPERATORS.get(OP)(**kw)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from tests.models.tiny_models_b import build_dwpose_onnx

    folder = tmp_path_factory.mktemp("dwpose")
    build_dwpose_onnx(str(folder / "dyn"))
    build_dwpose_onnx(str(folder / "fixed"), dynamic=False)
    return folder


def test_missing_models_name_every_path(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "a") + os.pathsep + str(tmp_path / "b"))
    with pytest.raises(FileNotFoundError) as e:
        _op()
    msg = str(e.value)
    assert str(tmp_path / "a" / "yolox_l.onnx") in msg and str(tmp_path / "b" / "yolox_l.onnx") in msg
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "yolox_l.onnx").write_bytes(b"x")
    with pytest.raises(FileNotFoundError, match="dw-ll_ucoco_384.onnx"):
        _op()
    with pytest.raises(FileNotFoundError, match="onnx_pose_model"):
        _op(onnx_pose_model=str(tmp_path / "nowhere" / "pose.onnx"))


def test_missing_model_under_dry_run(tmp_path, monkeypatch, make_recipe, capsys):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    rc, out = dry_run(make_recipe, [{OP: {}}], capsys=capsys)
    assert rc != 0
    assert str(tmp_path / "models" / "yolox_l.onnx") in out


def test_params_defaults_and_bad_values(tmp_path, monkeypatch):
    for n in ("yolox_l.onnx", "dw-ll_ucoco_384.onnx"):
        (tmp_path / n).write_bytes(b"x")
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    op = _op()
    assert (op.frame_num, op.duration, op.tag_field_name, op.if_save_visualization, op.accelerator) == \
        (3, 0, "pose_estimation_tags", False, "cuda")
    assert op._det_path == str(tmp_path / "yolox_l.onnx")
    with pytest.raises(ValueError, match="duration"):
        _op(duration=-1)


def test_no_video_and_already_tagged_skip_the_model(tmp_path, monkeypatch):
    for n in ("yolox_l.onnx", "dw-ll_ucoco_384.onnx"):
        (tmp_path / n).write_bytes(b"not onnx")  # never loaded: nothing to estimate
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    out = _op().process_batched({"videos": [[], ["x.mp4"]], Fields.meta: [{}, {TAG: {"done": 1}}]})
    assert out[Fields.meta][0] == {TAG: {k: [] for k in KEYS}}
    assert out[Fields.meta][1] == {TAG: {"done": 1}}


def test_corrupt_model_is_a_clear_error(tmp_path, monkeypatch):
    for n in ("yolox_l.onnx", "dw-ll_ucoco_384.onnx"):
        (tmp_path / n).write_bytes(b"not onnx")
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    v = write_video(str(tmp_path / "v.mp4"))
    clear_models()
    with pytest.raises(ValueError, match="is not a loadable ONNX model"):
        _op(accelerator="cpu").process_batched({"videos": [[v]]})


def test_pose_helpers_on_known_inputs():
    from data_juicer.models.dwpose import nms, simcc_decode

    boxes = np.array([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]], dtype=float)
    assert nms(boxes, np.array([0.9, 0.8, 0.7]), 0.45) == [0, 2]
    sx = np.zeros((1, 2, 6))
    sy = np.zeros((1, 2, 4))
    sx[0, 0, 5], sy[0, 0, 2] = 0.8, 0.6
    locs, vals = simcc_decode(sx, sy)
    assert locs.tolist() == [[[2.5, 1.0], [-0.5, -0.5]]]
    assert vals.tolist() == [[0.6, 0.0]]


@pytest.mark.slow
def test_tiny_dwpose_matches_data_juicer_and_batches(models, tmp_path, monkeypatch):
    # values from Data-Juicer 1.6.1's DWposeDetector (ops/common/dwpose_func.py) on the same two
    # ONNX files and frames (tests/models/tiny_models_b.build_dwpose_onnx, seed 0)
    monkeypatch.setenv("DJ_MODELS_DIR", str(models / "dyn"))
    v1 = write_video(str(tmp_path / "v1.mp4"), frames=8, w=96, h=72)
    v2 = write_video(str(tmp_path / "v2.mp4"), frames=6, w=64, h=48, moving=False)
    clear_models()
    op = _op(accelerator="cpu", if_save_visualization=True, save_visualization_dir=str(tmp_path / "vis"))
    metas = op.process_batched({"videos": [[v1], [v2, v1]], Fields.meta: [{}, {}]})[Fields.meta]
    tag = metas[0][TAG]
    assert sorted(tag) == sorted(KEYS)
    assert [len(tag[k]) for k in KEYS] == [3] * 5
    assert [len(b) for b in tag["bbox_results_list"]] == [11, 11, 12]
    np.testing.assert_allclose(tag["bbox_results_list"][0][:2], [[14.770767, 28.70862, 28.616135, 43.136757],
                                                                 [2.770767, 28.70862, 16.616135, 43.136757]],
                               atol=1e-4)
    np.testing.assert_allclose(tag["bbox_results_list"][2][7], [9.813048, 3.490588, 67.584511, 63.863865], atol=1e-4)
    np.testing.assert_allclose(tag["body_keypoints"][0][0][:2], [[0.190293, 0.351198], [0.280432, 0.574042]],
                               atol=1e-5)
    np.testing.assert_allclose(tag["foot_keypoints"][1][0][:2], [[0.371572, 0.483903], [0.334014, 0.53398]],
                               atol=1e-5)
    np.testing.assert_allclose(tag["hands_keypoints"][2][-1][0], [0.355239, 0.222085], atol=1e-5)
    body = np.array(tag["body_keypoints"][0])
    people = body.shape[0]
    assert body.shape == (people, 18, 2)
    assert np.array(tag["foot_keypoints"][0]).shape == (people, 6, 2)
    assert np.array(tag["faces_keypoints"][0]).shape == (people, 68, 2)
    assert np.array(tag["hands_keypoints"][0]).shape == (2 * people, 21, 2)
    assert sorted(os.listdir(tmp_path / "vis" / "v1_pose_output")) == \
        ["temp_frame_pose_0.jpg", "temp_frame_pose_1.jpg", "temp_frame_pose_2.jpg"]
    # the second row: its first video only, as Data-Juicer
    assert len(metas[1][TAG]["body_keypoints"]) == 3
    # a fixed-batch export gives the same values (one crop at a time)
    monkeypatch.setenv("DJ_MODELS_DIR", str(models / "fixed"))
    clear_models()
    again = _op(accelerator="cpu").process_batched({"videos": [[v1]]})[Fields.meta][0][TAG]
    for k in KEYS:
        for a, b in zip(tag[k], again[k]):
            np.testing.assert_allclose(np.array(a), np.array(b), atol=1e-5)
    clear_models()


@pytest.mark.slow
def test_dj_process_bad_video_goes_to_ledger(models, tmp_path, monkeypatch, make_recipe):
    from data_juicer.cli.process import main

    monkeypatch.setenv("DJ_MODELS_DIR", str(models / "dyn"))
    good = write_video(str(tmp_path / "good.mp4"))
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video")
    clear_models()
    recipe = make_recipe(rows=[{"text": "a", "videos": [good]}, {"text": "b", "videos": [str(bad)]}],
                         process=[{OP: {"frame_num": 2, "accelerator": "cpu"}}], keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["text"] for r in out] == ["a"]
    assert len(out[0][Fields.meta][TAG]["body_keypoints"]) == 2
    errors = [e for p in (tmp_path / "out").rglob("errors.jsonl") for e in read_jsonl(p)]
    assert len(errors) == 1 and errors[0]["op"] == OP and "bad.mp4" in json.dumps(errors[0])
    clear_models()
