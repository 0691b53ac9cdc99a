import os

import pytest

from data_juicer.models import plugins
from data_juicer.models.loader import clear_models


@pytest.fixture(autouse=True)
def _clean():
    yield
    plugins.unregister_plugin("vggt")
    clear_models()


def test_missing_plugin_says_what_and_how(monkeypatch):
    monkeypatch.delenv(plugins.PLUGINS_ENV, raising=False)
    with pytest.raises(plugins.PluginNotFoundError) as e:
        plugins.check_plugin("vggt", who="vggt_mapper")
    msg = str(e.value)
    assert msg.startswith("vggt_mapper: the model code of VGGT (facebookresearch/vggt) is not bundled")
    assert "register_plugin('vggt', f)" in msg and plugins.PLUGINS_ENV in msg and plugins.ENTRY_POINT_GROUP in msg
    with pytest.raises(ValueError, match="unknown plug-in kind"):
        plugins.register_plugin("nope", lambda p, d: None)


def test_registered_factory_built_once_and_checked():
    calls = []

    def factory(model_path, device, scale=1):
        calls.append((model_path, device, scale))
        return lambda batch: [x * scale for x in batch]

    plugins.register_plugin("vggt", factory)
    p1 = plugins.load_plugin("vggt", "/w", "cpu", who="t", scale=3)
    p2 = plugins.load_plugin("vggt", "/w", "cpu", who="t", scale=3)
    assert p1 is p2 and calls == [("/w", "cpu", 3)]
    assert plugins.predict("vggt", p1, [1, 2]) == [3, 6]
    plugins.register_plugin("vggt", lambda p, d: (lambda batch: batch[:1]))
    with pytest.raises(ValueError, match="returned 1 outputs for 2 inputs"):
        plugins.predict("vggt", plugins.load_plugin("vggt", "/w", "cpu"), [1, 2])


def test_plugin_module_from_environment(tmp_path, monkeypatch):
    (tmp_path / "my_dj_plugins.py").write_text(
        "from data_juicer.models.plugins import register_plugin\n"
        "@register_plugin('vggt')\n"
        "def make(model_path, device):\n"
        "    return lambda batch: ['ok:' + str(x) for x in batch]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(plugins.PLUGINS_ENV, "my_dj_plugins")
    pred = plugins.load_plugin("vggt", None, "cpu")
    assert pred([1]) == ["ok:1"]
    monkeypatch.setenv(plugins.PLUGINS_ENV, "no_such_module_xyz")
    plugins.unregister_plugin("vggt")
    with pytest.raises(plugins.PluginNotFoundError, match="no_such_module_xyz"):
        plugins.find_plugin("vggt")


def test_weights_resolved_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError) as e:
        plugins.resolve_plugin_weights("facebook/VGGT-1B", "vggt_mapper", "vggt_model_path")
    assert str(tmp_path / "facebook" / "VGGT-1B") in str(e.value) and "vggt_model_path" in str(e.value)
    os.makedirs(tmp_path / "facebook" / "VGGT-1B")
    assert plugins.resolve_plugin_weights("facebook/VGGT-1B") == str(tmp_path / "facebook" / "VGGT-1B")
    f = tmp_path / "w.pth"
    f.write_bytes(b"x")
    assert plugins.resolve_plugin_weights(str(f)) == str(f)
