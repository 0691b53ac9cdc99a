"""human_preference_annotation_mapper against a real Label Studio server (tests/human/conftest.py)."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from data_juicer.ops.registry import OPERATORS

NAME = "human_preference_annotation_mapper"
RECIPES = Path(__file__).parents[1] / "data" / "dj_recipes" / "annotation"  # in-repo copy of the published recipes
ROWS = [{"id": 1, "prompt": "2+2?", "answer1": "4", "answer2": "5"},
        {"id": 2, "prompt": "Capital of France?", "answer1": "Lyon", "answer2": "Paris"},
        {"id": 3, "prompt": "Colour of the sky?", "answer1": "blue", "answer2": "green"}]
PICK = {"2+2?": "left", "Capital of France?": "right", "Colour of the sky?": "left"}


def choose(data):
    return PICK.get(data.get("prompt"))


def batch(rows):
    return {k: [r.get(k) for r in rows] for k in rows[0]}


def rows_of(b):
    return [{k: b[k][i] for k in b} for i in range(len(next(iter(b.values()))))]


def build(ls, tmp_path, **kw):
    kw.setdefault("project_name_prefix", f"t_{tmp_path.name}")
    return OPERATORS.get(NAME)(api_url=ls.url, api_key=ls.token, work_dir=str(tmp_path / "job"), **kw)


def in_background(fn, *args):
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t


# -- without a server ------------------------------------------------------------------------


def test_task_format_and_write_back_without_a_server():
    op = OPERATORS.get(NAME)(api_url="http://127.0.0.1:1", api_key="k", prompt_key="q", answer1_key="a",
                             answer2_key="b")
    task = op.format_task({"q": "Q", "a": "A", "b": "B", "id": 7, "tags": ["x"], "score": None})
    assert task == {"prompt": "Q", "answer1": "A", "answer2": "B", "meta:id": "7", "meta:score": ""}
    assert op.format_task({})["prompt"] == "No prompt provided"
    s = op.apply_annotation({"result": [{"type": "pairwise", "value": {"selected": "right"}}]}, {"a": "A", "b": "B"})
    assert (s["chosen"], s["rejected"]) == ("B", "A")
    s = op.apply_annotation({"result": [{"type": "pairwise", "value": {"selected": "answer1"}}]}, {"a": "A", "b": "B"})
    assert (s["chosen"], s["rejected"]) == ("A", "B")
    assert "chosen" not in op.apply_annotation({"result": [{"type": "choices", "value": {}}]}, {"a": "A", "b": "B"})
    assert op.text_key == "q" and "k" not in repr(op)


def test_bad_parameters_are_clear(tmp_path, monkeypatch):
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    with pytest.raises(ValueError, match="api_url"):
        OPERATORS.get(NAME)()
    with pytest.raises(FileNotFoundError, match="nope.xml"):
        OPERATORS.get(NAME)(api_url="http://x", label_config_file=str(tmp_path / "nope.xml"))
    cfg = tmp_path / "view.xml"
    cfg.write_text("<View><Text name='prompt' value='$prompt'/></View>\n")
    assert OPERATORS.get(NAME)(api_url="http://x", label_config_file=str(cfg)).label_config == \
        "<View><Text name='prompt' value='$prompt'/></View>"


@pytest.mark.parametrize("recipe", ["annotation_default.yaml", "annotation_with_notifications.yaml"])
def test_shared_recipes_validate(recipe, tmp_path):
    from data_juicer.config.recipe import load_recipe

    cfg = yaml.safe_load((RECIPES / recipe).read_text())
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(ROWS[0]) + "\n")
    cfg.update(dataset_path=str(data), export_path=str(tmp_path / "out" / "r.jsonl"))
    path = tmp_path / recipe
    path.write_text(yaml.safe_dump(cfg))
    r = load_recipe(["--config", str(path)])
    (op,) = r.process if hasattr(r, "process") else r["process"]
    assert NAME in str(op)


# -- with the server ---------------------------------------------------------------------------


@pytest.mark.slow
def test_round_trip(label_studio, tmp_path):
    op = build(label_studio, tmp_path, wait_for_annotations=True, timeout=120, poll_interval=0.5)
    annot = in_background(lambda: label_studio.annotate(op.ensure_project(), choose, expect=3))
    out = rows_of(op.process_batched(batch(ROWS)))
    annot.join(10)
    assert [(r["chosen"], r["rejected"]) for r in out] == [("4", "5"), ("Paris", "Lyon"), ("blue", "green")]
    tasks = label_studio.tasks(op.project_id)
    assert len(tasks) == 3
    assert sorted((t.data["prompt"], t.data["answer1"], t.data["meta:id"]) for t in tasks) == [
        ("2+2?", "4", "1"), ("Capital of France?", "Lyon", "2"), ("Colour of the sky?", "blue", "3")]
    project = label_studio.client.projects.get(id=op.project_id)
    assert project.title.startswith(f"t_{tmp_path.name}_") and "Pairwise" in project.label_config


@pytest.mark.slow
def test_timeout_then_resume_without_duplicates(label_studio, tmp_path):
    op = build(label_studio, tmp_path, wait_for_annotations=True, timeout=2, poll_interval=0.5)
    t = time.monotonic()
    out = rows_of(op.process_batched(batch(ROWS)))
    assert time.monotonic() - t < 30
    assert [r.get("chosen") for r in out] == [None, None, None] and [r["prompt"] for r in out] == [
        r["prompt"] for r in ROWS]
    pid = op.project_id
    # one sample annotated meanwhile: a new op of the same job resumes on the same project
    label_studio.annotate(pid, lambda d: "right" if d["prompt"] == "2+2?" else None, expect=3)
    again = build(label_studio, tmp_path, wait_for_annotations=True, timeout=2, poll_interval=0.5)
    out = rows_of(again.process_batched(batch(ROWS)))
    assert again.project_id == pid and len(label_studio.tasks(pid)) == 3
    assert [r.get("chosen") for r in out] == ["5", None, None]
    # without waiting, annotations already there are still written back
    label_studio.annotate(pid, choose, expect=3)
    out = rows_of(build(label_studio, tmp_path).process_batched(batch(ROWS)))
    assert [r["chosen"] for r in out] == ["5", "Paris", "blue"] and len(label_studio.tasks(pid)) == 3


def _recipe(tmp_path, ls, name="annotation_default.yaml", **op_overrides):
    cfg = yaml.safe_load((RECIPES / name).read_text())
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    cfg.update(dataset_path=str(data), export_path=str(tmp_path / "out" / "annotated.jsonl"))
    op = cfg["process"][0][NAME]
    op.update(api_url=ls.url, api_key=ls.token, project_name_prefix=f"r_{tmp_path.name}", **op_overrides)
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path, tmp_path / "out" / "annotated.jsonl"


def _state(tmp_path):
    files = list((tmp_path / "out").glob("label_studio_*.json"))
    return json.loads(files[0].read_text())["project_id"] if files else None


@pytest.mark.slow
@pytest.mark.parametrize("name", ["annotation_default.yaml", "annotation_with_notifications.yaml"])
def test_shared_recipes_run_with_the_server(label_studio, tmp_path, name):
    from data_juicer.cli.process import main

    path, export = _recipe(tmp_path, label_studio, name, timeout=120, poll_interval=1)

    def annotator():
        while _state(tmp_path) is None:
            time.sleep(0.3)
        label_studio.annotate(_state(tmp_path), choose, expect=3)

    t = in_background(annotator)
    assert main(["--config", str(path)]) == 0
    t.join(10)
    out = [json.loads(x) for x in export.read_text().splitlines()]
    assert [(r["chosen"], r["rejected"]) for r in out] == [("4", "5"), ("Paris", "Lyon"), ("blue", "green")]


@pytest.mark.slow
def test_resume_after_a_crash_creates_no_duplicate_tasks(label_studio, tmp_path):
    from data_juicer.cli.process import main

    path, export = _recipe(tmp_path, label_studio, timeout=600, poll_interval=1)
    code = f"from data_juicer.cli.process import main; raise SystemExit(main(['--config', {str(path)!r}]))"
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=os.getcwd(), start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while (_state(tmp_path) is None or len(label_studio.tasks(_state(tmp_path))) < 3) and \
                time.monotonic() < deadline:
            time.sleep(0.5)
        pid = _state(tmp_path)
        assert pid is not None and len(label_studio.tasks(pid)) == 3
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the crash, while it waits for annotators
        proc.wait()
    assert not export.exists()
    t = in_background(lambda: label_studio.annotate(pid, choose, expect=3))
    assert main(["--config", str(path)]) == 0
    t.join(10)
    assert len(label_studio.tasks(pid)) == 3
    out = [json.loads(x) for x in export.read_text().splitlines()]
    assert [r["chosen"] for r in out] == ["4", "Paris", "blue"]


@pytest.mark.slow
def test_concurrent_workers_of_one_job_share_one_project(label_studio, tmp_path):
    ops = [build(label_studio, tmp_path) for _ in range(4)]
    ids = [None] * 4

    def run(i):
        ids[i] = ops[i].ensure_project()

    threads = [in_background(run, i) for i in range(4)]
    for t in threads:
        t.join(60)
    assert len(set(ids)) == 1 and ids[0] is not None
