"""Paths that can be checked before any data is read: caught by validation (so by --dry_run too), exit 2
with one message naming the path; the input is never overwritten."""
import os

import pytest

from tests.badinput.conftest import one_paragraph, write_lines

ROWS = ['{"id": 0, "text": "hello there"}', '{"id": 1, "text": "second row"}']


@pytest.fixture
def blocker(tmp_path):
    """A regular file where a folder should be: nothing can ever be created under it."""
    path = tmp_path / "blocker"
    path.write_text("I am a file")
    return path


def _check(dj, recipe, *needles):
    for extra in (["--dry_run"], []):
        rc, out, err = dj("--config", recipe, *extra)
        assert rc == 2, (extra, out, err)
        msg = one_paragraph(err)
        for n in needles:
            assert n in msg, (extra, msg)


def test_work_dir_that_cannot_be_created(make_recipe, tmp_path, blocker, dj):
    recipe = make_recipe(None, [], dataset_path=write_lines(tmp_path / "d.jsonl", ROWS),
                         work_dir=str(blocker / "jobs"))
    _check(dj, recipe, "cannot write to the job folder", f"'{blocker}' is a file, not a folder", "change work_dir")
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to any folder, so a read-only one cannot be made")
def test_read_only_work_dir(make_recipe, tmp_path, dj):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        recipe = make_recipe(None, [], dataset_path=write_lines(tmp_path / "d.jsonl", ROWS), work_dir=str(ro / "jobs"))
        _check(dj, recipe, "cannot write to the job folder", f"('{ro}' is not writable)")
    finally:
        ro.chmod(0o755)


def test_work_dir_without_write_permission(make_recipe, tmp_path, dj, monkeypatch):
    # what a non-root user sees for a read-only folder (root may write anywhere, so os.access is faked)
    ro = tmp_path / "ro"
    ro.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(ro) else real(p, mode, **kw))
    recipe = make_recipe(None, [], dataset_path=write_lines(tmp_path / "d.jsonl", ROWS), work_dir=str(ro / "jobs"))
    _check(dj, recipe, f"cannot write to the job folder '{ro / 'jobs'}{os.sep}", f"('{ro}' is not writable)",
           "change work_dir or the folder's permissions")


def test_export_folder_that_cannot_be_created(make_recipe, tmp_path, blocker, dj):
    recipe = make_recipe(None, [], dataset_path=write_lines(tmp_path / "d.jsonl", ROWS),
                         export_path=str(blocker / "sub" / "result.jsonl"))
    _check(dj, recipe, "cannot write to the export folder", f"'{blocker}' is a file, not a folder")


def test_checkpoint_dir_that_cannot_be_created(make_recipe, tmp_path, blocker, dj):
    recipe = make_recipe(None, [], dataset_path=write_lines(tmp_path / "d.jsonl", ROWS), use_checkpoint=True,
                         checkpoint_dir=str(blocker / "ckpt"))
    _check(dj, recipe, "cannot write to the checkpoint folder", "change checkpoint_dir")


def test_event_log_dir_that_cannot_be_created(make_recipe, tmp_path, blocker, dj):
    recipe = make_recipe(None, [], dataset_path=write_lines(tmp_path / "d.jsonl", ROWS),
                         event_log_dir=str(blocker / "logs"))
    _check(dj, recipe, "cannot write to the event log folder", "change event_log_dir")


@pytest.mark.parametrize("how", ["same path", "relative path", "symlink", "stats file"])
def test_export_path_may_never_overwrite_an_input(how, make_recipe, tmp_path, dj, monkeypatch):
    data = write_lines(tmp_path / "data.jsonl", ROWS)
    before = open(data, "rb").read()
    if how == "same path":
        export = data
    elif how == "relative path":
        monkeypatch.chdir(tmp_path)
        export = os.path.join(".", "sub", "..", "data.jsonl")
    elif how == "symlink":
        (tmp_path / "link").symlink_to(tmp_path)
        export = str(tmp_path / "link" / "data.jsonl")
    else:  # the result's stats file, result_stats.jsonl, would replace the input
        data = write_lines(tmp_path / "result_stats.jsonl", ROWS)
        before = open(data, "rb").read()
        export = str(tmp_path / "result.jsonl")
    recipe = make_recipe(None, [{"text_length_filter": {"min_len": 1}}], dataset_path=data, export_path=export)
    _check(dj, recipe, "the data it is made from", "choose another export_path")
    assert open(data, "rb").read() == before


def test_export_path_inside_the_dataset_folder(make_recipe, tmp_path, dj):
    folder = tmp_path / "data"
    write_lines(folder / "part-0.jsonl", ROWS)
    recipe = make_recipe(None, [], dataset_path=str(folder), export_path=str(folder / "out" / "result.jsonl"))
    _check(dj, recipe, f"is inside the dataset folder '{folder}'", "read as input by the next run")


def test_work_dir_inside_the_dataset_folder(make_recipe, tmp_path, dj):
    folder = tmp_path / "data"
    write_lines(folder / "part-0.jsonl", ROWS)
    recipe = make_recipe(None, [], dataset_path=str(folder), work_dir=str(folder / "jobs"))
    _check(dj, recipe, "the job folder", f"is inside the dataset folder '{folder}'", "set work_dir outside it")


def test_valid_paths_still_run(make_recipe, tmp_path, dj):
    recipe = make_recipe(None, [], dataset_path=write_lines(tmp_path / "data" / "d.jsonl", ROWS),
                         export_path=str(tmp_path / "new" / "deep" / "result.jsonl"), work_dir=str(tmp_path / "w"))
    rc, _, _ = dj("--config", recipe, "--dry_run")
    assert rc == 0 and not (tmp_path / "new").exists()
    rc, _, _ = dj("--config", recipe)
    assert rc == 0 and (tmp_path / "new" / "deep" / "result.jsonl").exists()
