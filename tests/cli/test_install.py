"""dj-install: usage, pins taken from the project's extras, and one source of truth for both."""
import os
import sys
import tomllib

import pytest

from data_juicer.cli import install as dj_install
from data_juicer.ops.registry import OPERATORS

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def _pyproject_requirements():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    reqs = list(project["dependencies"])
    for extra, items in project["optional-dependencies"].items():
        reqs += [f"{r}; extra == \"{extra}\"" for r in items]
    return reqs


def test_no_arguments_prints_usage_and_exits_2(capsys):
    assert dj_install.main([]) == 2
    assert "usage: dj-install --config RECIPE" in capsys.readouterr().err


def test_extras_pins_keep_the_extras_spelling_and_versions():
    pins = dj_install.extras_pins(['ufal.kenlm; extra == "nlp"', "numba>=0.60", 'spacy<3.9; extra == "nlp"',
                                   'data_juicer[nlp]; extra == "test"', 'moto[server]>=5; extra == "test"'])
    assert pins == {"ufal-kenlm": "ufal.kenlm", "numba": "numba>=0.60", "spacy": "spacy<3.9",
                    "moto": "moto[server]>=5"}
    assert dj_install.pinned("Spacy", pins) == "spacy<3.9"
    assert dj_install.pinned("unknown-dist", pins) == "unknown-dist"


def test_dry_run_installs_what_is_missing_pinned_as_the_extras_pin_it(make_recipe, capsys, monkeypatch):
    recipe = make_recipe([{"text": "x"}], [{"words_num_filter": {"tokenization": True}}])
    monkeypatch.setattr("data_juicer.utils.lazy.is_available", lambda dist: False)
    pins = dj_install.extras_pins(_pyproject_requirements())
    monkeypatch.setattr(dj_install, "extras_pins", lambda: pins)
    assert dj_install.main(["--config", recipe, "--dry_run"]) == 0
    out = capsys.readouterr().out
    assert "missing  sentencepiece>=0.2  (words_num_filter)" in out
    assert out.strip().endswith(f"{sys.executable} -m pip install sentencepiece>=0.2")


def test_every_package_an_op_requires_is_pinned_in_an_extra():
    pins = dj_install.extras_pins(_pyproject_requirements())
    unpinned = {}
    for name in sorted(OPERATORS.builtin):
        for dist in OPERATORS.get(name).requires:
            if dj_install._canonical(dist) not in pins:
                unpinned.setdefault(dist, []).append(name)
    assert unpinned == {}, f"add these to an extra in pyproject.toml: {unpinned}"


@pytest.mark.parametrize("argv", [["--config", "/nonexistent/recipe.yaml"]])
def test_bad_recipe_is_exit_2(argv, capsys):
    assert dj_install.main(argv) == 2
    assert "dj-install: error:" in capsys.readouterr().err
