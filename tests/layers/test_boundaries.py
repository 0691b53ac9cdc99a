"""Imports point down the layers of DESIGN.md: one test per layer, over every import statement
of its files (module level and inside functions), so a lazy upward import fails too.

    cli -> config -> core -> lineage -> ops / models / media -> utils
    (ops may use the lineage engine for lineage_stage; the engine imports none of ops, core, config)
"""
import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "data_juicer")

# layer -> the data_juicer packages its files may import (besides itself)
ALLOWED = {
    "utils": set(),
    "media": {"utils"},
    "models": {"utils", "media"},
    "lineage": {"utils"},
    "ops": {"utils", "models", "media", "lineage"},
    "analysis": {"utils", "ops"},
    "core": {"utils", "models", "media", "lineage", "ops", "analysis"},
    "config": {"utils", "ops", "core"},
    "cli": {"utils", "models", "media", "lineage", "ops", "analysis", "core", "config"},
}


def _imports(path: str):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module


def _violations(layer: str, root: str = ROOT) -> list[str]:
    folder = os.path.join(root, layer)
    bad = []
    for dirpath, _, files in os.walk(folder):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            for line, mod in _imports(path):
                parts = mod.split(".")
                if parts[0] != "data_juicer" or len(parts) < 2:
                    continue
                target = parts[1]
                if target == layer or target in ALLOWED[layer] or target not in ALLOWED:
                    continue
                bad.append(f"{os.path.relpath(path, root)}:{line} imports {mod}")
    return bad


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_imports_point_down(layer):
    if not os.path.isdir(os.path.join(ROOT, layer)):
        pytest.skip(f"no data_juicer/{layer} here")
    assert _violations(layer) == []


def test_the_check_finds_an_upward_import(tmp_path):
    pkg = tmp_path / "ops"
    pkg.mkdir()
    (pkg / "x.py").write_text("import os\n\ndef f():\n    from data_juicer.core.executor import Executor\n")
    (pkg / "y.py").write_text("from data_juicer.utils.constant import Fields\nimport data_juicer.config.recipe\n")
    assert sorted(_violations("ops", str(tmp_path))) == ["ops/x.py:4 imports data_juicer.core.executor",
                                                       "ops/y.py:2 imports data_juicer.config.recipe"]
