import numpy as np
import pytest

from data_juicer.models import plugins
from data_juicer.models.loader import clear_models
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.ops.vision_other_helpers import dry_run

NAME = "image_tagging_mapper"
WEIGHTS = "ram_plus_swin_large_14m.pth"


def solid(path, rgb, size=(20, 10)):
    from PIL import Image

    Image.new("RGB", size, rgb).save(path)
    return str(path)


@pytest.fixture
def ram(tmp_path, monkeypatch):
    """RAM weights (a stand-in file) in DJ_MODELS_DIR and the stand-in plug-in registered."""
    import importlib

    import tests.models.ram_fake_plugin as fake

    importlib.reload(fake)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / WEIGHTS).write_bytes(b"weights")
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    fake.CALLS.clear()
    yield fake
    plugins.unregister_plugin("ram")
    clear_models()


def test_missing_weights_name_every_path(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert str(tmp_path / "m" / WEIGHTS) in str(e.value)


def test_missing_plugin_says_the_code_is_not_bundled(tmp_path, monkeypatch):
    plugins.unregister_plugin("ram")
    monkeypatch.delenv(plugins.PLUGINS_ENV, raising=False)
    (tmp_path / WEIGHTS).write_bytes(b"w")
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    with pytest.raises(plugins.PluginNotFoundError) as e:
        OPERATORS.get(NAME)()
    msg = str(e.value)
    assert msg.startswith(f"{NAME}: the model code of Recognize Anything Plus, RAM++ (xinyu1205/recognize-anything) "
                          "is not bundled")
    assert "register_plugin('ram', f)" in msg and "(3, 384, 384)" in msg


def test_missing_weights_under_dry_run(tmp_path, monkeypatch, make_recipe, capsys):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    rc, out = dry_run(make_recipe, [{NAME: {}}], capsys=capsys)
    assert rc == 2 and str(tmp_path / "m" / WEIGHTS) in out


def test_ram_input_is_resized_and_normalised():
    from PIL import Image

    from data_juicer.models.tagging import ram_input

    x = ram_input(Image.new("RGB", (7, 5), (255, 0, 128)))
    assert x.shape == (3, 384, 384) and x.dtype == np.float32
    assert x[:, 0, 0].tolist() == pytest.approx([2.2489083, -2.0357143, 0.4264926], abs=1e-6)


def test_tags_are_ordered_by_count_then_first_seen():
    from data_juicer.models.tagging import ordered_tags

    assert ordered_tags(["dog | grass | sky", "grass | cat", "sky | grass"]) == ["grass", "sky", "dog", "cat"]


def test_tags_per_image_in_one_call(ram, tmp_path):
    red = solid(tmp_path / "r.png", (250, 10, 10))
    blue = solid(tmp_path / "b.png", (10, 20, 90), size=(5, 50))
    op = OPERATORS.get(NAME)()
    rows = {"text": ["a", "b", "c"], "images": [[red, blue], [], [blue]],
            Fields.meta: [{}, {}, {"image_tags": [["kept"]]}], Fields.stats: [{}, {}, {}]}
    out = op.process_batched(rows)
    assert [m["image_tags"] for m in out[Fields.meta]] == [
        [["red", "dark", "thing"], ["blue", "dark", "thing"]], [[]], [["kept"]]]
    assert ram.CALLS == [2]


def test_end_to_end_bad_images_go_to_the_ledger(ram, tmp_path, make_recipe):
    import json
    import os

    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    good = solid(tmp_path / "g.png", (10, 240, 10))
    (tmp_path / "junk.png").write_bytes(b"not a png")
    rows = [{"id": "a", "text": "x", "images": [good]},
            {"id": "gone", "text": "x", "images": [str(tmp_path / "nope.png")]},
            {"id": "junk", "text": "x", "images": [str(tmp_path / "junk.png")]}]
    recipe = make_recipe(rows, [{NAME: {}}])
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    assert [r["id"] for r in read_jsonl(out / "result.jsonl")] == ["a"]
    stats = read_jsonl(out / "result_stats.jsonl")
    assert stats[0][Fields.meta]["image_tags"] == [["green", "dark", "thing"]]
    job = [os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))][0]
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert sorted(e["op"] for e in errors) == [NAME] * 2
    text = json.dumps(errors)
    assert "nope.png" in text and "junk.png" in text


def test_ram_input_equals_rams_torchvision_transform():
    """RAM's get_transform: Resize((384, 384)), ToTensor, Normalize(ImageNet) (torchvision: the vision extra)."""
    from PIL import Image
    from torchvision import transforms as T

    from data_juicer.models.tagging import ram_input

    img = Image.fromarray(np.random.RandomState(0).randint(0, 256, (37, 53, 3)).astype("uint8"))
    ref = T.Compose([T.Resize((384, 384)), T.ToTensor(),
                     T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])(img).numpy()
    assert np.abs(ram_input(img) - ref).max() == 0.0
