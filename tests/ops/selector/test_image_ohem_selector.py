import pytest

from data_juicer.core.dataset import DJDataset
from data_juicer.utils.constant import Fields
from tests.ops.vision_other_helpers import write_image

OP = "image_ohem_selector"


def _op(**kw):
    from data_juicer.ops.registry import OPERATORS

    return OPERATORS.get(OP)(**kw)


def _mean_loss(model, samples, images, device, scale=1.0):
    # the loss of a sample: its mean pixel value (first image), times the model's factor
    import numpy as np

    return [float(np.asarray(imgs[0]).mean()) * model["factor"] * scale if imgs else 0.0 for imgs in images]


def test_params():
    with pytest.raises(ValueError, match="top_ratio or topk"):
        _op(score_fn=_mean_loss)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        _op(score_fn=_mean_loss, top_ratio=1.5)
    with pytest.raises(ValueError, match="non-negative"):
        _op(score_fn=_mean_loss, topk=-1)
    with pytest.raises(ValueError, match="score_fn"):
        _op(topk=1)
    with pytest.raises(ValueError, match="existing Python"):
        _op(topk=1, score_file="/nowhere/s.py")
    op = _op(score_fn=_mean_loss, topk=2)
    assert (op.batch_size, op.loss_field, op.device, op.accelerator) == (8, "image_ohem_loss", "auto", "cuda")


def test_keeps_hardest_with_losses(tmp_path):
    from PIL import Image

    paths = []
    for k, level in enumerate([10, 200, 50, 120, 200]):
        p = str(tmp_path / f"{k}.png")
        Image.new("RGB", (8, 8), (level, level, level)).save(p)
        paths.append(p)
    rows = [{"text": str(k), "images": [p]} for k, p in enumerate(paths)] + [{"text": "none", "images": []}]
    calls = []

    def factory(factor):
        calls.append(factor)
        return {"factor": factor}

    op = _op(score_fn=_mean_loss, model_factory=factory, model_kwargs={"factor": 2}, score_kwargs={"scale": 0.5},
             top_ratio=0.5, batch_size=4)
    ds = op.process(DJDataset.from_rows(rows))
    got = ds.rows(range(len(ds)))
    # 6 samples * 0.5 = 3, highest loss first; equal losses keep sample order
    assert [r["text"] for r in got] == ["1", "4", "3"]
    assert [r[Fields.stats]["image_ohem_loss"] for r in got] == [200.0, 200.0, 120.0]
    assert calls == [2]  # the model is built once per run
    assert len(_op(score_fn=_mean_loss, model_factory=factory, model_kwargs={"factor": 1}, top_ratio=1.0,
                   topk=0).process(DJDataset.from_rows(rows))) == 0


def test_score_file_and_bad_losses(tmp_path):
    img = write_image(str(tmp_path / "a.png"), 4, 4)
    f = tmp_path / "s.py"
    f.write_text("def score_fn(model, samples, images, device):\n    return [len(s['text']) for s in samples]\n"
                 "def bad(model, samples, images, device):\n    return [1.0]\n"
                 "def nan(model, samples, images, device):\n    return [float('nan')] * len(samples)\n")
    rows = [{"text": "ab", "images": [img]}, {"text": "abcd", "images": [img]}, {"text": "a", "images": [img]}]
    ds = _op(score_file=str(f), topk=1, device="cpu").process(DJDataset.from_rows(rows))
    assert ds.rows([0])[0]["text"] == "abcd" and ds.rows([0])[0][Fields.stats]["image_ohem_loss"] == 4.0
    with pytest.raises(ValueError, match="one loss per sample"):
        _op(score_file=str(f), score_function="bad", topk=1).process(DJDataset.from_rows(rows))
    with pytest.raises(ValueError, match="NaN"):
        _op(score_file=str(f), score_function="nan", topk=1).process(DJDataset.from_rows(rows))
    with pytest.raises(ValueError, match="'nope' not found"):
        _op(score_file=str(f), score_function="nope", topk=1)
    with pytest.raises(FileNotFoundError, match="gone.png"):
        _op(score_file=str(f), topk=1).process(DJDataset.from_rows([{"text": "x", "images": [str(tmp_path / "gone.png")]}]))
