"""Ray checkpoints: a driver SIGKILLed after some ops resumes there and gives the same output;
a worker killed mid-batch is retried without losing or duplicating samples."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import yaml

from data_juicer.cli.process import main
from tests.conftest import read_jsonl, write_jsonl

OPS = textwrap.dedent('''
    import os
    import time

    from data_juicer.ops.base import Mapper
    from data_juicer.ops.registry import OPERATORS

    FLAG = {flag!r}
    ONCE = {once!r}


    @OPERATORS.register_module("append_bang_mapper")
    class AppendBangMapper(Mapper):
        """Appends '!' (applying it twice would show)."""

        def process_batched(self, samples):
            samples[self.text_key] = [t + "!" for t in samples[self.text_key]]
            return samples


    @OPERATORS.register_module("hang_while_flag_mapper")
    class HangWhileFlagMapper(Mapper):
        """Waits while the flag file exists (a run to be killed mid-way)."""

        def process_batched(self, samples):
            while os.path.exists(FLAG):
                time.sleep(0.1)
            return samples


    @OPERATORS.register_module("die_once_mapper")
    class DieOnceMapper(Mapper):
        """Kills its worker process the first time it runs (the marker file records it)."""

        def process_batched(self, samples):
            try:
                fd = os.open(ONCE, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return samples
            os.close(fd)
            os._exit(1)
''')

PROCESS = [{"append_bang_mapper": None}, {"text_length_filter": {"min_len": 20}},
           {"document_deduplicator": None}, {"hang_while_flag_mapper": None}, {"append_bang_mapper": None}]


def _setup(tmp_path):
    rows = [{"id": i, "text": f"text number {i % 30} " + "x" * (i % 30)} for i in range(60)]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    ops = tmp_path / "ops.py"
    ops.write_text(OPS.format(flag=str(tmp_path / "hang.flag"), once=str(tmp_path / "died.once")))
    return data, str(ops)


def _recipe(tmp_path, name, data, ops, process=PROCESS, **extra):
    cfg = {"dataset_path": data, "export_path": str(tmp_path / name / "out.jsonl"), "np": 2,
           "custom_operator_paths": [ops], "process": process, **extra}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def _cmd(recipe):
    return [sys.executable, "-m", "data_juicer.cli.process", "--config", recipe]


@pytest.mark.slow  # 16 s; a killed worker and a changed recipe stay in the default suite
def test_sigkill_driver_then_resume_gives_same_output(tmp_path, ray_local):
    data, ops = _setup(tmp_path)
    assert main(["--config", _recipe(tmp_path, "ref", data, ops)]) == 0  # the default executor
    recipe = _recipe(tmp_path, "ckpt", data, ops, executor_type="ray", ray_address=ray_local, use_checkpoint=True)
    state = tmp_path / "ckpt" / "ckpt" / "ray" / "ckpt_ops.json"
    flag = tmp_path / "hang.flag"
    flag.write_text("wait")
    proc = subprocess.Popen(_cmd(recipe), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:
            if state.exists() and len(json.loads(state.read_text())["ops"]) >= 3:
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.stdout.read().decode()
        assert len(json.loads(state.read_text())["ops"]) == 3  # mapper + filter + dedup saved; now hanging
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        flag.unlink()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert not (tmp_path / "ckpt" / "out.jsonl").exists()
    resumed = subprocess.run(_cmd(recipe), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "3 of 5 ops already applied" in resumed.stderr
    ours, ref = read_jsonl(tmp_path / "ckpt" / "out.jsonl"), read_jsonl(tmp_path / "ref" / "out.jsonl")
    assert ours == ref
    assert all(r["text"].endswith("x!!") for r in ours if "x" in r["text"])


@pytest.mark.slow  # 5 s; tests/core/test_checkpoint_resume.py covers a changed recipe by default
def test_changed_recipe_prefix_starts_over(tmp_path, ray_local, capsys):
    data, ops = _setup(tmp_path)
    process = [{"append_bang_mapper": None}, {"text_length_filter": {"min_len": 20}}]
    recipe = _recipe(tmp_path, "ckpt", data, ops, process=process, executor_type="ray", use_checkpoint=True)
    assert main(["--config", recipe]) == 0
    cfg = yaml.safe_load(open(recipe))
    cfg["process"][1] = {"text_length_filter": {"min_len": 30}}
    open(recipe, "w").write(yaml.safe_dump(cfg))
    capsys.readouterr()
    assert main(["--config", recipe]) == 0
    assert "recipe's ops differ from it: starting from the beginning" in capsys.readouterr().err
    assert all(len(r["text"]) >= 30 for r in read_jsonl(tmp_path / "ckpt" / "out.jsonl"))
    # the same recipe again: everything is in the checkpoint, nothing is applied twice
    assert main(["--config", recipe]) == 0
    assert "2 of 2 ops already applied" in capsys.readouterr().err
    assert all(r["text"].count("!") == 1 for r in read_jsonl(tmp_path / "ckpt" / "out.jsonl"))


def test_killed_worker_is_retried_without_loss_or_duplicates(tmp_path, ray_local):
    data, ops = _setup(tmp_path)
    process = [{"append_bang_mapper": None}, {"die_once_mapper": None}, {"text_length_filter": {"min_len": 20}}]
    (tmp_path / "died.once").write_text("")  # not in this process: the default executor runs it here
    assert main(["--config", _recipe(tmp_path, "ref", data, ops, process=process)]) == 0
    os.remove(tmp_path / "died.once")
    assert main(["--config", _recipe(tmp_path, "ray", data, ops, process=process, executor_type="ray")]) == 0
    assert (tmp_path / "died.once").exists()  # a worker did die
    assert read_jsonl(tmp_path / "ray" / "out.jsonl") == read_jsonl(tmp_path / "ref" / "out.jsonl")
