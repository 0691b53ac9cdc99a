"""Empty or content-free recipe files: one message saying what is wrong, exit 2."""
import pytest

from tests.badinput.conftest import one_paragraph


@pytest.mark.parametrize("content, says", [
    ("", "the recipe file is empty;"),
    ("\n\n   \n", "the recipe file is empty;"),
    ("# only a comment\n# and another\n", "the recipe file is empty (only comments);"),
])
def test_empty_recipe_file(content, says, tmp_path, dj):
    path = tmp_path / "recipe.yaml"
    path.write_text(content)
    for extra in (["--dry_run"], []):
        rc, _, err = dj("--config", str(path), *extra)
        assert rc == 2
        msg = one_paragraph(err)
        assert msg.startswith(f"dj-process: error: {path}: {says}") and "dataset_path, export_path" in msg, msg


@pytest.mark.parametrize("content, says", [
    ("- a\n- b\n", "a recipe is a mapping of keys"),
    ("dataset_path: [unclosed\n", "not valid YAML"),
])
def test_recipe_that_is_not_a_mapping(content, says, tmp_path, dj):
    path = tmp_path / "recipe.yaml"
    path.write_text(content)
    rc, _, err = dj("--config", str(path))
    assert rc == 2 and f"{path}: {says}" in one_paragraph(err)
