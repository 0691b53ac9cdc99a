import os
import shutil

import numpy as np
import pytest

from data_juicer.models.loader import clear_models
from data_juicer.utils.constant import Fields
from tests.ops.vision_other_helpers import dry_run, write_image

OP = "image_remove_background_mapper"


def _op(**kw):
    from data_juicer.ops.registry import OPERATORS

    return OPERATORS.get(OP)(**kw)


def test_missing_model_names_every_path(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("U2NET_HOME", str(tmp_path / "u2"))
    with pytest.raises(FileNotFoundError) as e:
        _op()
    assert str(tmp_path / "m" / "u2net.onnx") in str(e.value) and str(tmp_path / "u2" / "u2net.onnx") in str(e.value)


def test_missing_model_under_dry_run(tmp_path, monkeypatch, make_recipe, capsys):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("U2NET_HOME", str(tmp_path / "u2"))
    rc, out = dry_run(make_recipe, [{OP: {}}], capsys=capsys)
    assert rc != 0 and str(tmp_path / "m" / "u2net.onnx") in out


def test_params_and_no_image(tmp_path, monkeypatch):
    monkeypatch.setenv("U2NET_HOME", str(tmp_path))  # found in rembg's own folder
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "none"))
    (tmp_path / "u2net.onnx").write_bytes(b"x")
    op = _op(bgcolor=[0, 0, 0, 255])
    assert op.bgcolor == (0, 0, 0, 255) and op.alpha_matting is False and op.accelerator == "cpu"
    out = op.process_batched({"images": [[]], "text": ["t"]})
    assert out["images"] == [[]] and out["text"] == ["t"]


def test_tiny_u2net_cutout_saved_and_reused(tmp_path, monkeypatch):
    import rembg
    from PIL import Image

    from tests.models.tiny_other_models import build_u2net_onnx

    model = build_u2net_onnx(str(tmp_path / "models"))
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    a = write_image(str(tmp_path / "in" / "a.jpg"), 60, 40, seed=0)
    clear_models()
    op = _op(save_dir=str(tmp_path / "out"))
    batch = {"images": [[a, a]], "image_bytes": [[None, None]]}
    out = op.process_batched(batch)
    new = out["images"][0]
    assert new[0] == new[1] and os.path.dirname(new[0]) == str(tmp_path / "out") and new[0].endswith(".png")
    assert os.path.basename(new[0]).startswith("a__dj_hash_#")
    assert out[Fields.source_file] == [[a, a]]
    got = Image.open(new[0])
    assert got.mode == "RGBA" and got.size == (60, 40)
    # the same as rembg's own remove() with this model (Data-Juicer's call, its default session)
    os.makedirs(tmp_path / "u2", exist_ok=True)
    shutil.copy(model, tmp_path / "u2" / "u2net.onnx")
    monkeypatch.setenv("U2NET_HOME", str(tmp_path / "u2"))
    # rembg's own u2net session over the same file (rembg.remove's default before rembg 2.0.7x)
    ref = rembg.remove(Image.open(a).convert("RGB"), session=rembg.new_session("u2net"))
    assert np.array_equal(np.asarray(got), np.asarray(ref))
    alpha = np.asarray(got)[..., 3]
    assert alpha.min() < alpha.max()  # a real mask, not all opaque
    assert out["image_bytes"][0][0][:8] == b"\x89PNG\r\n\x1a\n"
    # a rerun gives the same path and does not call the model again
    mtime = os.path.getmtime(new[0])
    op._remove = None  # would fail if called
    again = op.process_batched({"images": [[a]]})
    assert again["images"] == [[new[0]]] and os.path.getmtime(new[0]) == mtime
    # other parameters give another file
    other = _op(save_dir=str(tmp_path / "out"), bgcolor=(255, 0, 0, 255)).process_batched({"images": [[a]]})
    assert other["images"][0][0] != new[0]
    assert Image.open(other["images"][0][0]).getpixel((0, 0))[3] == 255
    clear_models()


def test_missing_image_is_a_clear_error(tmp_path, monkeypatch):
    from tests.models.tiny_other_models import build_u2net_onnx

    build_u2net_onnx(str(tmp_path / "models"))
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    with pytest.raises(FileNotFoundError, match="gone.png"):
        _op().process_batched({"images": [[str(tmp_path / "gone.png")]]})


def test_end_to_end_missing_image_goes_to_the_ledger(tmp_path, monkeypatch, make_recipe):
    import json

    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl
    from tests.models.tiny_other_models import build_u2net_onnx

    build_u2net_onnx(str(tmp_path / "models"))
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    imgs = [write_image(str(tmp_path / "in" / f"{k}.png"), 20, 16, seed=k) for k in range(2)]
    rows = [{"id": "a", "text": "x", "images": [imgs[0]]}, {"id": "bad", "text": "x", "images": [str(tmp_path / "no.png")]},
            {"id": "b", "text": "x", "images": [imgs[1]]}]
    recipe = make_recipe(rows, [{OP: {"save_dir": str(tmp_path / "cut")}}])
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = read_jsonl(out / "result.jsonl")
    assert [r["id"] for r in res] == ["a", "b"]
    assert all(r["images"][0].startswith(str(tmp_path / "cut")) and os.path.exists(r["images"][0]) for r in res)
    job = [os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))][0]
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert len(errors) == 1 and errors[0]["op"] == OP and "no.png" in json.dumps(errors[0])
