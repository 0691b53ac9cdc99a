"""use_checkpoint: a run killed during op k resumes at op k with the same final output."""
import os
import subprocess
import sys
import textwrap

import pytest
import yaml

from tests.conftest import read_jsonl, write_jsonl

OPS = textwrap.dedent('''
    import os

    from data_juicer.ops.base import Mapper
    from data_juicer.ops.registry import OPERATORS


    @OPERATORS.register_module("append_bang_mapper")
    class AppendBangMapper(Mapper):
        """Appends '!' (applying it twice would show)."""

        def process_batched(self, samples):
            samples[self.text_key] = [t + "!" for t in samples[self.text_key]]
            return samples


    from data_juicer.ops.base import Deduplicator


    @OPERATORS.register_module("crash_if_asked_deduplicator")
    class CrashIfAskedDeduplicator(Deduplicator):
        """Keeps everything; kills the process in its dataset-level step when DJ_TEST_CRASH_DEDUP is set."""

        def compute_hash(self, samples):
            samples["__dj__hash"] = [str(len(t)) for t in samples[self.text_key]]
            return samples

        def process(self, dataset, show_num=0):
            if os.environ.get("DJ_TEST_CRASH_DEDUP"):
                os._exit(3)
            return dataset, {}


    @OPERATORS.register_module("crash_if_asked_mapper")
    class CrashIfAskedMapper(Mapper):
        """Kills the process when DJ_TEST_CRASH is set (a crash mid-run)."""

        def process_batched(self, samples):
            if os.environ.get("DJ_TEST_CRASH"):
                os._exit(3)
            return samples
''')


def _recipe(tmp_path, name, use_checkpoint):
    rows = [{"id": i, "text": f"text number {i} " + "x" * i} for i in range(40)]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    (tmp_path / "ops.py").write_text(OPS)
    cfg = {"dataset_path": data, "export_path": str(tmp_path / name / "out.jsonl"), "np": 1,
           "use_checkpoint": use_checkpoint, "custom_operator_paths": [str(tmp_path / "ops.py")],
           "process": [{"append_bang_mapper": None}, {"text_length_filter": {"min_len": 20}},
                       {"document_deduplicator": None}, {"crash_if_asked_mapper": None},
                       {"append_bang_mapper": None}]}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def _run(recipe, crash=False):
    env = dict(os.environ)
    env.pop("DJ_TEST_CRASH", None)
    if crash:
        env["DJ_TEST_CRASH"] = "1"
    return subprocess.run([sys.executable, "-m", "data_juicer.cli.process", "--config", recipe],
                          capture_output=True, text=True, env=env, timeout=180)


def test_crash_then_resume_gives_same_output(tmp_path):
    reference = _run(_recipe(tmp_path, "ref", False))
    assert reference.returncode == 0, reference.stderr
    recipe = _recipe(tmp_path, "ckpt", True)
    crashed = _run(recipe, crash=True)
    assert crashed.returncode == 3
    assert not (tmp_path / "ckpt" / "out.jsonl").exists()
    assert os.path.isdir(tmp_path / "ckpt" / "ckpt" / "latest")
    resumed = _run(recipe)
    assert resumed.returncode == 0, resumed.stderr
    assert "3 of 5 ops already applied" in resumed.stderr
    ours, ref = read_jsonl(tmp_path / "ckpt" / "out.jsonl"), read_jsonl(tmp_path / "ref" / "out.jsonl")
    assert ours == ref
    # the first mapper ran once before the crash and was not applied again on resume
    assert all(r["text"].endswith("x!!") for r in ours if r["id"] > 0)


def test_changed_recipe_starts_over(tmp_path):
    recipe = _recipe(tmp_path, "ckpt", True)
    assert _run(recipe).returncode == 0
    cfg = yaml.safe_load(open(recipe))
    cfg["process"][1] = {"text_length_filter": {"min_len": 30}}
    open(recipe, "w").write(yaml.safe_dump(cfg))
    again = _run(recipe)
    assert again.returncode == 0 and "recipe's ops differ" in again.stderr
    assert all(len(r["text"]) >= 30 for r in read_jsonl(tmp_path / "ckpt" / "out.jsonl"))


@pytest.mark.slow  # 5 s; test_crash_then_resume_gives_same_output stays in the default suite
def test_crash_inside_a_dedup_does_not_reapply_the_ops_before_it(tmp_path):
    rows = [{"id": i, "text": f"text number {i}"} for i in range(20)]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    (tmp_path / "ops.py").write_text(OPS)
    cfg = {"dataset_path": data, "export_path": str(tmp_path / "out" / "out.jsonl"), "np": 1,
           "use_checkpoint": True, "custom_operator_paths": [str(tmp_path / "ops.py")],
           "process": [{"append_bang_mapper": None}, {"crash_if_asked_deduplicator": None},
                       {"append_bang_mapper": None}]}
    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump(cfg))
    env = dict(os.environ, DJ_TEST_CRASH_DEDUP="1")
    crashed = subprocess.run([sys.executable, "-m", "data_juicer.cli.process", "--config", str(recipe)],
                             capture_output=True, text=True, env=env, timeout=180)
    assert crashed.returncode == 3
    assert _run(str(recipe)).returncode == 0
    texts = [r["text"] for r in read_jsonl(tmp_path / "out" / "out.jsonl")]
    assert texts == [f"text number {i}!!" for i in range(20)]  # each mapper once: not "!!!"
