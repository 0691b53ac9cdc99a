"""lineage_stage in a recipe streams finished samples to the per-sample ops after it."""
import json

import pytest
import yaml

from data_juicer.cli.process import main
from tests.conftest import read_jsonl

TEST_OPS = '''
import json
import time

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("test_slow_child_mapper")
class SlowChild(Mapper):
    """Sleeps on children whose text holds SLOW, then logs that it is done."""

    def __init__(self, delay: float = 1.0, log: str = "", wait_for_id: int = -1, **kwargs):
        super().__init__(**kwargs)
        self.delay, self.log, self.wait_for_id = delay, log, wait_for_id

    def _reached(self):
        try:
            with open(self.log) as f:
                return any(json.loads(line).get("id") == self.wait_for_id for line in f if line.strip())
        except FileNotFoundError:
            return False

    def process_single(self, sample):
        if "SLOW" in sample[self.text_key]:
            if self.wait_for_id < 0:
                time.sleep(self.delay)
            else:  # sleep until sample wait_for_id has reached the next op, at most delay seconds
                end = time.time() + self.delay
                while time.time() < end and not self._reached():
                    time.sleep(0.05)
            with open(self.log, "a") as f:
                f.write(json.dumps({"event": "slow_done", "t": time.time()}) + "\\n")
        return sample


@OPERATORS.register_module("test_stamp_mapper")
class Stamp(Mapper):
    """Logs when each sample reaches it and marks the sample."""

    def __init__(self, log: str = "", **kwargs):
        super().__init__(**kwargs)
        self.log = log

    def process_batched(self, samples):
        with open(self.log, "a") as f:
            for i in samples["id"]:
                f.write(json.dumps({"event": "downstream", "id": i, "t": time.time()}) + "\\n")
        samples["n_children"] = [len(c) for c in samples["children"]]
        return samples
'''

DOCS = [
    {"id": 0, "text": "fast one two\n\nfast three four"},
    {"id": 1, "text": "this is SLOW here\n\nand a quick one"},
    {"id": 2, "text": "x"},
    {"id": 3, "text": "p q r s\n\nt u v\n\nw"},
    {"id": 4, "text": "last two words"},
]


def run_recipe(tmp_path, name, stream, executor="default", delay=2.5, wait_for_id=-1, stamp_batch=8):
    (tmp_path / "ops.py").write_text(TEST_OPS)
    data = tmp_path / "docs.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    log = tmp_path / f"{name}.log"
    process = [
        {"lineage_stage": {"child_ops": [{"test_slow_child_mapper": {"delay": delay, "log": str(log), "wait_for_id": wait_for_id,
                                                                    "batch_size": 1}},
                                         {"words_num_filter": {"min_num": 2, "batch_size": 1}}],
                           "stream": stream}},
        {"test_stamp_mapper": {"log": str(log), "batch_size": stamp_batch}},
        {"words_num_filter": {"min_num": 2}},  # on the parent's text: drops id 2
    ]
    cfg = {"project_name": name, "dataset_path": str(data), "np": 1, "executor_type": executor,
           "export_path": str(tmp_path / name / "out.jsonl"),
           "custom_operator_paths": [str(tmp_path / "ops.py")], "process": process}
    recipe = tmp_path / f"{name}.yaml"
    recipe.write_text(yaml.safe_dump(cfg))
    assert main(["--config", str(recipe)]) == 0
    events = read_jsonl(log)
    slow = next(e["t"] for e in events if e["event"] == "slow_done")
    reached = {e["id"]: e["t"] for e in events if e["event"] == "downstream"}
    return read_jsonl(tmp_path / name / "out.jsonl"), slow, reached


def test_downstream_ops_get_fast_samples_before_the_slow_one_is_done(tmp_path):
    out, slow, reached = run_recipe(tmp_path, "streamed", stream=True)
    # sample 0 finished first and went through the next op while sample 1's slow child still slept
    assert reached[0] < slow - 1.0
    assert reached[1] > slow and sorted(reached) == [0, 1, 3, 4]  # id 2 had no surviving child
    base, slow_b, reached_b = run_recipe(tmp_path, "whole", stream=False)
    assert min(reached_b.values()) > slow_b  # without streaming every sample waits for the slowest
    assert out == base  # same rows, same order
    assert [(r["id"], r["n_children"]) for r in out] == [(0, 2), (1, 2), (3, 2), (4, 1)]
    assert out[1]["children"] == ["this is SLOW here", "and a quick one"]
    stats = read_jsonl(tmp_path / "streamed" / "out_stats.jsonl")
    assert stats == read_jsonl(tmp_path / "whole" / "out_stats.jsonl")


class _Burster:
    """A streaming op whose samples finish out of input order."""

    name = "burster"

    def iter_bursts(self, dataset):
        yield [(2, [{"id": 2, "text": "c c"}])]
        yield [(0, [{"id": 0, "text": "a a"}, {"id": 0, "text": "a2 a2"}]), (1, [{"id": 1, "text": "b"}])]


def test_hf_backend_puts_streamed_rows_back_in_input_order(tmp_path):
    import datasets

    from data_juicer.core.backends.hf import HFBackend
    from data_juicer.core.executor import Stage
    from data_juicer.core.runner import FusedRun
    from data_juicer.ops.registry import OPERATORS

    class Job:
        ledger = None

    class Recipe:  # the typed settings HFBackend reads
        cfg = {"np": 1}
        np, use_cache, cache_compress, skip_op_error = 1, False, None, True

    backend = HFBackend(Recipe(), Job())
    op = OPERATORS.get("words_num_filter")(min_num=2)
    run = FusedRun([op], mark_errors=False)
    ds = datasets.Dataset.from_list([{"id": i, "text": "z"} for i in range(3)])
    out, n_mid = backend.run_streamed(_Burster(), ds, Stage([op], row_wise=True), run, batch_size=2)
    assert n_mid == 4
    assert [(r["id"], r["text"]) for r in out.to_list()] == [(0, "a a"), (0, "a2 a2"), (2, "c c")]


@pytest.mark.slow  # a local Ray
def test_on_ray_the_next_pass_runs_on_bursts_while_the_stage_goes_on(tmp_path):
    import ray

    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    # the slow child waits (up to 180 s: Ray workers start slowly on a loaded machine) until sample 0 has
    # reached the next pass: that happens only if the pass runs on bursts while the stage still works
    out, slow, reached = run_recipe(tmp_path, "ray", stream=True, executor="ray", delay=180.0, wait_for_id=0,
                                      stamp_batch=1)  # on Ray the next pass gets the stage's rows in input order, batch_size at a time
    assert reached[0] < slow and reached[1] > slow and slow - reached[0] < 120
    base, _, _ = run_recipe(tmp_path, "default", stream=False)
    assert out == base
