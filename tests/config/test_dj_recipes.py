"""Data-Juicer's published recipes validate here unchanged (for every op we have)."""
import glob
import json
import os

import pytest
import yaml

from data_juicer.config.recipe import ConfigError, load_recipe

# copies of Data-Juicer's operator spec and published recipes, kept in the repository as test data
SHARED = os.path.join(os.path.dirname(__file__), "..", "data")
RECIPES = sorted(p for p in glob.glob(os.path.join(SHARED, "dj_recipes", "**", "*.yaml"), recursive=True)
                 if "process" in (yaml.safe_load(open(p)) or {}))


def _spec_ops():
    with open(os.path.join(SHARED, "spec", "ops.json")) as f:
        return {o["name"] for o in json.load(f)}


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: os.path.relpath(p, SHARED))
def test_recipe_validates_or_only_lacks_an_op(path):
    try:
        recipe = load_recipe(["--config", path], check_paths=False)
    except ConfigError as e:
        msg = str(e)
        # the only acceptable failure: an op of Data-Juicer's catalogue that is not built yet
        assert "unknown operator" in msg, msg
        name = msg.split("unknown operator '", 1)[1].split("'", 1)[0]
        assert name in _spec_ops(), f"{name} is not a Data-Juicer op: {msg}"
        return
    assert recipe.ops, "a recipe with a process list resolves to ops"


def test_some_published_recipes_fully_validate():
    ok = 0
    for path in RECIPES:
        try:
            load_recipe(["--config", path], check_paths=False)
            ok += 1
        except ConfigError:
            pass
    assert ok >= 1
