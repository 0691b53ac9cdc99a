import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_operator_docs_are_current():
    res = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "op_docs.py"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr + " — regenerate with `python tools/op_docs.py` and commit docs/Operators.md"


def test_recipe_reference_is_current():
    res = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "recipe_docs.py"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr + " — regenerate with `python tools/recipe_docs.py` and commit docs/recipes.md"


def test_recipe_reference_lists_every_key():
    from data_juicer.config.schema import EXTRA_KEYS, GLOBAL_KEYS

    text = open(os.path.join(ROOT, "docs", "recipes.md"), encoding="utf-8").read()
    assert "| `np` | integer > 0 | `4` |" in text
    missing = [k for k, *_ in GLOBAL_KEYS + EXTRA_KEYS if f"| `{k}` |" not in text]
    assert missing == []
