import os

import numpy as np
import pytest

from data_juicer.models.loader import clear_models
from data_juicer.utils.constant import Fields, MetaKeys
from tests.ops.vision_other_helpers import dry_run, write_image

OP = "image_detection_yolo_mapper"


def _op(**kw):
    from data_juicer.ops.registry import OPERATORS

    return OPERATORS.get(OP)(**kw)


def test_missing_model_names_every_path(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "a") + os.pathsep + str(tmp_path / "b"))
    with pytest.raises(FileNotFoundError) as e:
        _op()
    msg = str(e.value)
    assert "yolo11n.pt" in msg and str(tmp_path / "a" / "yolo11n.pt") in msg and str(tmp_path / "b" / "yolo11n.pt") in msg
    with pytest.raises(FileNotFoundError, match="does not exist"):
        _op(model_path=str(tmp_path / "nowhere" / "my.pt"))


def test_missing_model_under_dry_run(tmp_path, monkeypatch, make_recipe, capsys):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    rc, out = dry_run(make_recipe, [{OP: {}}], capsys=capsys)
    assert rc != 0
    assert str(tmp_path / "models" / "yolo11n.pt") in out


def test_params_and_defaults(tmp_path, monkeypatch):
    (tmp_path / "yolo11n.pt").write_bytes(b"x")
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    op = _op()
    assert (op.imgsz, op.conf, op.iou, op.model_path, op.memory, op.accelerator) == \
        (640, 0.05, 0.5, "yolo11n.pt", "800MB", "cuda")


def test_no_image_and_already_tagged_skip_the_model(tmp_path, monkeypatch):
    (tmp_path / "yolo11n.pt").write_bytes(b"not a checkpoint")  # never loaded: nothing to predict
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    op = _op()
    batch = {"images": [[], ["x.jpg"]], Fields.meta: [{}, {MetaKeys.bbox_tag: [[[1.0, 2.0, 3.0, 4.0]]]}]}
    out = op.process_batched(batch)
    assert out[Fields.meta][0] == {MetaKeys.bbox_tag: [], MetaKeys.class_label_tag: []}
    assert out[Fields.meta][1] == {MetaKeys.bbox_tag: [[[1.0, 2.0, 3.0, 4.0]]]}


def test_corrupt_checkpoint_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "yolo11n.pt").write_bytes(b"not a checkpoint")
    img = write_image(str(tmp_path / "a.png"), 40, 30)
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    clear_models()
    with pytest.raises(ValueError, match="not a valid Ultralytics yolo checkpoint"):
        _op(imgsz=64).process_batched({"images": [[img]]})


@pytest.mark.slow
def test_tiny_yolo_batched_equals_alone(tmp_path, monkeypatch):
    from tests.models.tiny_other_models import build_yolo

    build_yolo(str(tmp_path / "models"))
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    a = write_image(str(tmp_path / "a.png"), 128, 96, seed=0)
    b = write_image(str(tmp_path / "b.png"), 64, 64, seed=1)
    clear_models()
    op = _op(imgsz=64, conf=0.05)
    out = op.process_batched({"images": [[a, b], [b], []]})
    metas = out[Fields.meta]
    boxes, labels = metas[0][MetaKeys.bbox_tag], metas[0][MetaKeys.class_label_tag]
    assert len(boxes) == 2 and len(labels) == 2
    assert len(boxes[0]) == len(labels[0]) > 0
    for box in boxes[0]:
        x, y, w, h = box
        assert 0 <= x <= 128 and 0 <= y <= 96 and abs(w) <= 128 and abs(h) <= 96  # clipped to the image
    assert all(0 <= c < 80 and c == int(c) for c in labels[0])
    # the same image gives the same boxes in another row and predicted alone
    assert metas[1][MetaKeys.bbox_tag][0] == boxes[1]
    alone = op.process_batched({"images": [[a]]})[Fields.meta][0][MetaKeys.bbox_tag][0]
    np.testing.assert_allclose(alone, boxes[0], atol=1e-4)
    assert metas[2] == {MetaKeys.bbox_tag: [], MetaKeys.class_label_tag: []}
    # equal to calling Ultralytics the way Data-Juicer does (the path, one image at a time)
    from ultralytics import YOLO

    ref = YOLO(str(tmp_path / "models" / "yolo11n.pt"))(a, imgsz=64, conf=0.05, iou=0.5, verbose=False)[0]
    np.testing.assert_allclose(ref.boxes.xywh.numpy(), boxes[0], atol=1e-3)
    assert ref.boxes.cls.numpy().tolist() == labels[0]
    clear_models()
