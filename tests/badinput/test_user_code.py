"""User code and models that can be checked before any data is read: a python_file_mapper file that
does not compile or import, and a missing model, end with exit 2 naming the file and line (or every
path looked at), under --dry_run and without it, with no traceback."""
import textwrap

import pytest

from data_juicer.models.loader import DJ_EXTERNAL_MODELS_ENV, DJ_MODELS_DIR_ENV, MODELS_DIR_ENV, clear_models
from tests.badinput.conftest import one_paragraph, write_lines

ROWS = ['{"id": 0, "text": "hello there"}']

CODE = {  # broken file -> what the message must say (after "'<file>', line N")
    "syntax": ("def process(sample)\n    return sample\n", 1, "SyntaxError: expected ':'"),
    "indentation": ("def process(sample):\nreturn sample\n", 2, "IndentationError: expected an indented block"),
    "import": ("import os\nimport not_a_module_dj_test\n\ndef process(sample):\n    return sample\n", 2,
               "ModuleNotFoundError: No module named 'not_a_module_dj_test' (install it, or remove the import)"),
    "top_level_error": ("X = 1\nY = X / 0\n\ndef process(sample):\n    return sample\n", 2,
                        "ZeroDivisionError: division by zero"),
}


@pytest.mark.parametrize("case", sorted(CODE))
def test_broken_python_file_names_file_and_line(case, make_recipe, tmp_path, dj):
    code, line, says = CODE[case]
    path = tmp_path / "user_fn.py"
    path.write_text(code)
    recipe = make_recipe(None, [{"python_file_mapper": {"file_path": str(path), "function_name": "process"}}],
                         dataset_path=write_lines(tmp_path / "d.jsonl", ROWS))
    for extra in (["--dry_run"], []):
        rc, _, err = dj("--config", recipe, *extra)
        assert rc == 2
        msg = one_paragraph(err)
        assert f"'{path}'" in msg and f"line {line}" in msg and says in msg, msg
    assert not (tmp_path / "out" / "result.jsonl").exists()


def test_python_file_without_the_function(make_recipe, tmp_path, dj):
    path = tmp_path / "user_fn.py"
    path.write_text(textwrap.dedent("""
        def other(sample):
            return sample
    """))
    recipe = make_recipe(None, [{"python_file_mapper": {"file_path": str(path), "function_name": "process"}}],
                         dataset_path=write_lines(tmp_path / "d.jsonl", ROWS))
    rc, _, err = dj("--config", recipe, "--dry_run")
    assert rc == 2 and f"function 'process' not found in '{path}'" in one_paragraph(err)


def test_bad_lambda_is_a_clear_error(make_recipe, tmp_path, dj):
    recipe = make_recipe(None, [{"python_lambda_mapper": {"lambda_str": "lambda s: (s"}}],
                         dataset_path=write_lines(tmp_path / "d.jsonl", ROWS))
    rc, _, err = dj("--config", recipe, "--dry_run")
    assert rc == 2 and "`lambda_str` is not valid Python ('(' was never closed)" in one_paragraph(err)


@pytest.fixture
def no_models(tmp_path, monkeypatch):
    models = tmp_path / "models"
    models.mkdir()
    monkeypatch.setenv(MODELS_DIR_ENV, str(models))
    monkeypatch.setenv(DJ_MODELS_DIR_ENV, str(models))
    monkeypatch.delenv(DJ_EXTERNAL_MODELS_ENV, raising=False)
    clear_models()
    yield models
    clear_models()


def test_missing_model_fails_dry_run(make_recipe, tmp_path, no_models, dj):
    recipe = make_recipe(None, [{"perplexity_filter": {"lang": "en"}}],
                         dataset_path=write_lines(tmp_path / "d.jsonl", ROWS))
    rc, out, err = dj("--config", recipe, "--dry_run")
    assert rc == 2
    msg = one_paragraph(err)
    assert "perplexity_filter" in msg and str(no_models / "en.sp.model") in msg, msg
    assert "ops (execution order)" not in out  # no plan printed for a recipe that cannot run
