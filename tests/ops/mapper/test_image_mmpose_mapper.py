import os

import numpy as np
import pytest

from data_juicer.models import plugins
from data_juicer.models.loader import clear_models
from data_juicer.utils.constant import Fields, MetaKeys
from tests.ops.vision_other_helpers import write_image

OP = "image_mmpose_mapper"


def _op(**kw):
    from data_juicer.ops.registry import OPERATORS

    return OPERATORS.get(OP)(**kw)


def toy_pose(model_path, device, deploy_cfg, model_cfg, model_files):
    """One 'person' per image: keypoints at the image's corners, score = mean blue value / 255."""
    def predict(batch):
        out = []
        for img in batch:
            h, w = img.shape[:2]
            out.append({"keypoints": np.array([[[0, 0], [w - 1, h - 1]]], dtype=np.float32),
                        "keypoint_scores": np.array([[img[..., 0].mean() / 255.0] * 2]),
                        "bboxes": np.array([[0, 0, w, h]]), "bbox_scores": np.array([1.0]),
                        "keypoint_names": ["top_left", "bottom_right"]})
        return out
    return predict


@pytest.fixture
def cfg(tmp_path):
    for name in ("deploy.py", "model.py", "w.onnx"):
        (tmp_path / name).write_text("x")
    plugins.register_plugin("mmpose", toy_pose)
    yield dict(deploy_cfg=str(tmp_path / "deploy.py"), model_cfg=str(tmp_path / "model.py"),
               model_files=str(tmp_path / "w.onnx"))
    plugins.unregister_plugin("mmpose")
    clear_models()


def test_missing_files_and_plugin(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError) as e:
        _op(deploy_cfg=str(tmp_path / "d.py"), model_cfg=None, model_files=[str(tmp_path / "w.pth")])
    msg = str(e.value)
    assert str(tmp_path / "d.py") in msg and "model_cfg None" in msg and str(tmp_path / "w.pth") in msg
    for name in ("d.py", "m.py", "w.pth"):
        (tmp_path / name).write_text("x")
    monkeypatch.delenv(plugins.PLUGINS_ENV, raising=False)
    with pytest.raises(plugins.PluginNotFoundError, match="MMPose.*not bundled"):
        _op(deploy_cfg=str(tmp_path / "d.py"), model_cfg=str(tmp_path / "m.py"), model_files=str(tmp_path / "w.pth"))


def test_pose_tags_per_image(cfg, tmp_path):
    from PIL import Image

    blue = str(tmp_path / "blue.png")
    Image.new("RGB", (20, 10), (0, 0, 255)).save(blue)
    other = write_image(str(tmp_path / "o.png"), 8, 6)
    op = _op(**cfg, visualization_dir=str(tmp_path / "vis"))
    out = op.process_batched({"images": [[blue, other, blue], []], Fields.meta: [None, {"k": 1}]})
    tags = out[Fields.meta][0][MetaKeys.pose_info]
    assert len(tags) == 3 and tags[0] == tags[2]
    assert tags[0]["keypoints"] == [[[0.0, 0.0], [19.0, 9.0]]]
    assert tags[0]["keypoint_scores"] == [[1.0, 1.0]]  # the plug-in got BGR: blue is channel 0
    assert tags[1]["bboxes"] == [[0, 0, 8, 6]] and tags[0]["keypoint_names"] == ["top_left", "bottom_right"]
    assert out[Fields.meta][1] == {"k": 1}
    assert sorted(os.listdir(tmp_path / "vis")) == ["blue.png", "o.png"]
