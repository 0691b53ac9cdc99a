"""The global settings the runtime reads are typed fields of the frozen Recipe, computed once by
``load_recipe``; data_juicer/core/ reads them there, not by string key from the ``cfg`` dict."""
import dataclasses
import os
import re

import pytest

from data_juicer.config.recipe import Recipe, load_recipe, typed_settings
from tests.conftest import write_jsonl

CORE = os.path.join(os.path.dirname(__file__), "..", "..", "data_juicer", "core")
LOOKUP = re.compile(r"\bcfg\[|\bcfg\.get\(")

# string-key lookups of the global cfg allowed in core/, per file: none (the last 63, in executor.py,
# backends/hf.py, analyzer.py and checkpoint.py, went to typed Recipe fields on 2026-12-01).
PENDING: dict = {}


def _lookups():
    found = {}
    for root, _, files in os.walk(CORE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                n = len(LOOKUP.findall(open(path, encoding="utf-8").read()))
                if n:
                    found[os.path.relpath(path, CORE).replace(os.sep, "/")] = n
    return found


def test_core_reads_no_setting_by_string_key_beyond_the_pending_ones():
    found = _lookups()
    extra = {f: n for f, n in found.items() if n > PENDING.get(f, 0)}
    assert not extra, f"new cfg[...] / cfg.get(...) lookups in core/ (read the Recipe's typed fields): {extra}"
    assert sum(found.values()) == 0
    for mine in ("backends/ray.py", "backends/ray_export.py", "ray_dataset.py", "ray_executor.py", "loader.py"):
        assert mine not in found


def test_the_lookup_pattern_counts_what_it_should():
    text = 'a = cfg["np"]; b = self.cfg.get("x"); c = dataset_cfg.get("configs"); d = recipe.np'
    assert len(LOOKUP.findall(text)) == 2


def test_settings_are_typed_and_computed_once(make_recipe, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": 1, "content": "x"}])
    path = make_recipe(None, [{"text_length_filter": None}], text_keys="content", suffixes=".jsonl",
                       dataset={"configs": [{"type": "local", "path": a, "weight": 2.0}], "max_sample_num": 3},
                       read_options={"block_size": 1024}, np=3, use_cache=False, op_list_to_trace=["x_mapper"])
    r = load_recipe(["--config", path])
    assert r.text_keys == ("content",) and r.text_key == "content"
    assert r.suffixes == (".jsonl",) and r.np == 3 and r.use_cache is False
    assert r.dataset_config["configs"][0]["weight"] == 2.0 and r.dataset_config["max_sample_num"] == 3
    assert r.read_options["block_size"] == 1024 and r.op_list_to_trace == ("x_mapper",)
    assert r.media_keys == ("images", "audios", "videos") and r.trace_num == 10 and r.ray_address == "auto"
    assert r.export_path.endswith("result.jsonl") and r.skip_op_error is True and r.checkpoint is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.np = 4
    with pytest.raises(TypeError):
        r.read_options["block_size"] = 1  # read-only
    assert r.project_name == "t"  # the other keys stay readable as attributes


def test_a_list_dataset_is_normalised_and_field_defaults_match_the_schema():
    from data_juicer.config.schema import GLOBAL_KEYS

    assert typed_settings({"dataset": [{"path": "p"}]})["dataset_config"] == {"configs": [{"path": "p"}]}
    defaults = {k: d for k, _, d, _ in GLOBAL_KEYS}
    fields = {f.name: f for f in dataclasses.fields(Recipe)}
    for name, value in typed_settings(defaults).items():
        default = fields[name].default if fields[name].default is not dataclasses.MISSING \
            else fields[name].default_factory()
        assert default == value, name
