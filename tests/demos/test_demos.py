"""Every demo recipe (configs/demo/*.yaml) and demo script (demos/*.py) runs, with its literal outcome.

Recipes run through dj-process's / dj-analyze's ``main`` from the repo root (their paths are relative
to it), with the export and any produced media redirected into the test's folder. Recipes that
register custom ops and the scripts run in a fresh interpreter, as a user runs them.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import read_jsonl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECIPES = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(ROOT, "configs", "demo", "*.yaml")))
SCRIPTS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "demos", "*.py")))
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])}


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def dj(name, tmp_path, *extra, tool="process"):
    """Runs configs/demo/<name>.yaml in this process; returns (kept rows, stats rows, export path)."""
    if tool == "process":
        from data_juicer.cli.process import main
    else:
        from data_juicer.cli.analyze import main
    export = tmp_path / "out" / "result.jsonl"
    assert main(["--config", f"configs/demo/{name}.yaml", "--export_path", str(export), *extra]) == 0
    stats = tmp_path / "out" / "result_stats.jsonl"
    rows = read_jsonl(export) if export.exists() else None
    return rows, (read_jsonl(stats) if stats.exists() else None), export


def ids(rows):
    return [r["id"] for r in rows]


def test_every_demo_has_a_test():
    tested = {"process", "analyze", "first-recipe", "custom_op", "dedup", "image", "audio", "video", "ray",
              "lineage"}
    assert set(RECIPES) == tested, "a new configs/demo recipe needs its test here"
    assert set(SCRIPTS) == {"custom_op.py", "process_in_memory.py", "lineage_stage.py"}


def test_process(tmp_path):
    rows, stats, _ = dj("process", tmp_path)
    # 2 'short' (text_length_filter), 4 mostly symbols, 5 a repeated word, 7 a repeat of 6
    assert ids(rows) == [0, 1, 3, 6, 8, 9]
    assert rows[0]["text"] == "Data-Juicer turns raw corpora into clean training data. Contact us at  for details."
    assert stats[0]["__dj__stats__"]["text_len"] == 83  # len() of the cleaned text


def test_first_recipe(tmp_path):
    rows, _, _ = dj("first-recipe", tmp_path)
    assert ids(rows) == [0, 1, 3, 4, 6, 7, 8, 9]  # 2 is under 20 characters, 5 repeats 4


def test_analyze(tmp_path):
    rows, stats, export = dj("analyze", tmp_path, tool="analyze")
    assert rows is None and len(stats) == 10  # statistics only, nothing is dropped or exported
    assert stats[0]["__dj__stats__"]["text_len"] == 99 and stats[0]["__dj__stats__"]["num_words"] == 14
    analysis = glob.glob(str(export.parent / "*" / "analysis"))[0]
    assert {"overall.csv", "report.html"} <= set(os.listdir(analysis))


def test_dedup(tmp_path):
    rows, _, _ = dj("dedup", tmp_path)
    # 5 and 6 repeat 0 and 1 (exact); 7 and 8 are near copies of 2 and 3 (MinHash, Jaccard 0.79 and 0.85)
    assert ids(rows) == [0, 1, 2, 3, 4, 9]


def test_image(tmp_path):
    rows, stats, _ = dj("image", tmp_path, "--image_blur_mapper.save_dir", str(tmp_path / "blurred"))
    # 3 the 240x40 banner (aspect ratio 6), 4 the 16x16 icon (shape), 1 a byte copy of 0 (dedup)
    assert ids(rows) == [0, 2, 5]
    assert [s["__dj__stats__"]["image_width"] for s in stats] == [[128], [80], [96]]
    blurred = sorted(os.listdir(tmp_path / "blurred"))
    assert len(blurred) == 3 and blurred[0].startswith("checker__dj_hash_")
    assert all(os.path.dirname(r["images"][0]) == str(tmp_path / "blurred") for r in rows)
    from PIL import Image

    assert Image.open(rows[0]["images"][0]).size == (128, 96)


def test_audio(tmp_path):
    rows, stats, _ = dj("audio", tmp_path)
    assert ids(rows) == [1]  # 0.5 s is too short, the 3 s chirp (48 KB) too big
    assert stats[0]["__dj__stats__"] == {"audio_duration": [1.5], "audio_sizes": [24044]}


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="video_split_by_duration_mapper needs the ffmpeg program "
                    "(Debian: apt-get install ffmpeg)")
def test_video(tmp_path):
    av = pytest.importorskip("av")
    rows, stats, _ = dj("video", tmp_path, "--video_split_by_duration_mapper.save_dir", str(tmp_path / "clips"))
    assert ids(rows) == [0, 0]  # the 1 s clip is dropped; the 3 s one is kept and split
    assert rows[0]["videos"] == ["./demos/data/videos/pattern_3s.mp4"]
    clips = rows[1]["videos"]
    assert len(clips) == 3 and rows[1]["text"].startswith("<__dj__video><__dj__video><__dj__video>")
    for clip in clips:
        with av.open(clip) as c:
            v = c.streams.video[0]
            assert (v.width, v.height) == (160, 120)
            assert abs(float(c.duration / 1e6) - 1.0) < 0.15
    assert stats[0]["__dj__stats__"] == {"video_duration": [3.0], "video_width": [160], "video_height": [120]}


def test_lineage(tmp_path):
    rows, _, _ = dj("lineage", tmp_path)
    assert ids(rows) == [0, 2]  # document 1 has no paragraph of 4 words
    assert rows[0]["paragraphs"] == ["Data-Juicer recipes are plain YAML files.",
                                     "Each operator is named by its registry name."]
    assert rows[0]["paragraph_stats"] == [{"num_words": 6}, {"num_words": 8}]


def test_ray_matches_the_default_executor(tmp_path):
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():  # as tests/ray/conftest.py starts it, kept for the session
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    rows, stats, export = dj("ray", tmp_path / "ray")
    _, default_stats, default_export = dj("process", tmp_path / "default")
    assert ids(rows) == [0, 1, 3, 6, 8, 9]
    assert export.read_bytes() == default_export.read_bytes() and stats == default_stats


def test_custom_op_recipe(tmp_path):
    # a fresh interpreter: the recipe registers demos/custom_op.py's op, which must not leak into other tests
    export = tmp_path / "out" / "result.jsonl"
    res = subprocess.run([sys.executable, "-m", "data_juicer.cli.process", "--config", "configs/demo/custom_op.yaml",
                          "--export_path", str(export)], cwd=ROOT, env=ENV, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    rows = read_jsonl(export)
    assert ids(rows) == [0, 1, 4, 5]  # the samples with 2 full stops or more
    # 0 and 5: "data.", "example.com", "details."; 1: "example.org", "manual.", "analysis."; 4: five lines
    assert [s["__dj__stats__"]["full_stops"] for s in read_jsonl(tmp_path / "out" / "result_stats.jsonl")] == \
        [3, 3, 5, 3]


@pytest.mark.parametrize("script", ["process_in_memory.py", "lineage_stage.py"])
def test_script_runs(script):
    # each script asserts its own outcome (kept ids, stats, paragraphs); here: it runs and prints them
    res = subprocess.run([sys.executable, os.path.join("demos", script)], cwd=ROOT, env=ENV, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    expected = {"process_in_memory.py": "configs/demo/process.yaml kept ids [1, 4]",
                "lineage_stage.py": "[[5, 8], [], [8]]"}[script]
    assert expected in res.stdout


def test_api_errors_name_the_recipe():
    from data_juicer import process
    from data_juicer.api import ConfigError

    with pytest.raises(ConfigError, match=r"^recipe: unknown key 'np_'\. Did you mean: np\?"):
        process([{"text": "a"}], {"np_": 1, "process": []})
    with pytest.raises(ConfigError, match="recipe file 'nowhere.yaml' does not exist"):
        process([{"text": "a"}], "nowhere.yaml")
    assert process([], [{"text_length_filter": {}}]) == []
    with pytest.raises(TypeError, match=r"^sample 1: samples must be JSON-serialisable dicts \(Object of type bytes"):
        process([{"text": "a"}, {"text": b"x"}], [])
    with pytest.raises(TypeError, match=r"^sample 0: expected a dict, got str"):
        process(["a"], [])


def test_api_resolves_relative_media_paths_and_returns_ledger_entries(tmp_path):
    from data_juicer import process

    samples = [{"id": 0, "text": "a", "images": ["images/checker.png"]},
               {"id": 1, "text": "b", "images": ["images/missing.png"]}]
    errors = []
    kept = process(samples, [{"image_shape_filter": {"min_width": 50}}], base_dir="demos/data", np=1,
                   skip_op_error=True, errors=errors)
    assert kept == [{"id": 0, "text": "a", "images": [os.path.join(ROOT, "demos", "data", "images", "checker.png")]}]
    assert len(errors) == 1 and errors[0]["op"] == "image_shape_filter" and "missing.png" in json.dumps(errors[0])


def test_demo_media_are_what_make_media_makes(tmp_path):
    # images and audio are byte-for-byte deterministic; the committed files are their output
    sys.path.insert(0, os.path.join(ROOT, "demos", "data"))
    try:
        import make_media
    finally:
        sys.path.pop(0)
    make_media.images(str(tmp_path / "images"))
    make_media.audio(str(tmp_path / "audio"))
    for kind in ("images", "audio"):
        names = sorted(os.listdir(tmp_path / kind))
        assert names == sorted(os.listdir(os.path.join(ROOT, "demos", "data", kind)))
        for n in names:
            with open(os.path.join(ROOT, "demos", "data", kind, n), "rb") as f:
                assert (tmp_path / kind / n).read_bytes() == f.read(), n
    total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(ROOT, "demos", "data", "*", "*")))
    assert total < 200_000, total
