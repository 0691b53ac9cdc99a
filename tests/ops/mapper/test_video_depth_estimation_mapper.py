import os

import numpy as np
import pytest

from data_juicer.models import plugins
from data_juicer.models.loader import clear_models
from data_juicer.utils.constant import Fields, MetaKeys
from tests.ops.vision_other_helpers import dry_run, write_video

OP = "video_depth_estimation_mapper"


def _op(**kw):
    from data_juicer.ops.registry import OPERATORS

    return OPERATORS.get(OP)(**kw)


def toy_depth(model_path, device):
    """A toy Video Depth Anything: depth = 1 + mean colour / 255 of each pixel, halved fps."""
    def predict(batch):
        return [{"depths": 1.0 + np.asarray(x["frames"], dtype=np.float32).mean(-1) / 255.0, "fps": x["fps"] / 2}
                for x in batch]
    return predict


@pytest.fixture
def models(tmp_path, monkeypatch):
    (tmp_path / "video_depth_anything_vitb.pth").write_bytes(b"w")
    (tmp_path / "video_depth_anything_metric_vits.pth").write_bytes(b"w")
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    plugins.register_plugin("video_depth", toy_depth)
    yield tmp_path
    plugins.unregister_plugin("video_depth")
    clear_models()


def test_missing_weights_then_missing_plugin(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    monkeypatch.delenv(plugins.PLUGINS_ENV, raising=False)
    with pytest.raises(FileNotFoundError) as e:
        _op()
    assert str(tmp_path / "video_depth_anything_vitb.pth") in str(e.value)
    (tmp_path / "video_depth_anything_vitb.pth").write_bytes(b"w")
    with pytest.raises(plugins.PluginNotFoundError, match="Video Depth Anything.*not bundled"):
        _op()


def test_missing_weights_under_dry_run(tmp_path, monkeypatch, make_recipe, capsys):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    rc, out = dry_run(make_recipe, [{OP: {}}], capsys=capsys)
    assert rc != 0 and str(tmp_path / "m" / "video_depth_anything_vitb.pth") in out


def test_params(models):
    op = _op()
    assert (op.max_res, op.torch_dtype, op.metric, op.tag_field_name) == (1280, "fp16", False, "video_depth_tags")
    assert _op(video_depth_model_path="video_depth_anything_metric_vits.pth").metric
    with pytest.raises(ValueError, match="torch_dtype"):
        _op(torch_dtype="bf16")


def test_depths_of_the_first_video(models, tmp_path):
    v = write_video(str(tmp_path / "v.mp4"), frames=3, w=64, h=48, fps=4)
    op = _op(max_res=32, if_save_visualization=True, save_visualization_dir=str(tmp_path / "vis"))
    out = op.process_batched({"videos": [[v, v], []], Fields.meta: [None, None]})
    tag = out[Fields.meta][0][MetaKeys.video_depth_tags]
    d = np.asarray(tag["depth_data"])
    assert d.shape == (3, 24, 32)  # 64x48 shrunk to a longer edge of 32
    assert tag["fps"] == 2.0 and 1.0 <= d.min() and d.max() <= 2.0
    assert out[Fields.meta][1][MetaKeys.video_depth_tags] == {"depth_data": [], "fps": -1}
    assert sorted(os.listdir(tmp_path / "vis")) == ["v_src.mp4", "v_vis.mp4"]


def test_metric_model_writes_point_clouds(models, tmp_path):
    v = write_video(str(tmp_path / "v.mp4"), frames=2, w=16, h=8, fps=4)
    op = _op(video_depth_model_path="video_depth_anything_metric_vits.pth",
             point_cloud_dir_for_metric=str(tmp_path / "pc"))
    op.process_batched({"videos": [[v]]})
    assert sorted(os.listdir(tmp_path / "pc")) == ["point0000.ply", "point0001.ply"]
    lines = (tmp_path / "pc" / "point0000.ply").read_text().splitlines()
    assert lines[2] == "element vertex 128" and len(lines) == 10 + 128
    x, y, z = map(float, lines[10].split()[:3])  # pixel (0, 0): x = (0 - 8) / 470.4 * z
    assert x == pytest.approx(-8 / 470.4 * z) and y == pytest.approx(-4 / 470.4 * z) and 1 <= z <= 2
