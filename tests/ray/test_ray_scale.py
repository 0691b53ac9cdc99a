"""Ray at scale: nothing gathered on the driver for groupers, failed rows ledgered per block, the
JSON Lines check run in the cluster; each with the default executor's output."""
import json
import os
import textwrap

import pytest

from data_juicer.cli.process import main
from tests.conftest import read_jsonl, write_jsonl
from tests.core.test_executor_failures import CUSTOM_OP


def _job(folder):
    return next(os.path.join(folder, d) for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))


def _bytes(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture
def no_driver_gather(monkeypatch):
    """Fail if anything gathers a whole Ray dataset (or a column of it) to the driver."""
    from data_juicer.core.ray_dataset import RayDataset

    def refuse(self, *a, **k):
        raise AssertionError("gathered the dataset on the driver")

    monkeypatch.setattr(RayDataset, "arrow_table", refuse)
    monkeypatch.setattr(RayDataset, "iter_batches", refuse)


ROWS = [{"id": i, "text": f"text number {i} " * (1 + i % 3), "meta": {"lang": ["en", "zh", "fr", None][i % 4]},
         "n": i % 5} for i in range(60)]


@pytest.mark.parametrize("process", [
    [{"key_value_grouper": {"group_by_keys": ["meta.lang"]}}],
    [{"text_length_filter": {"min_len": 20}}, {"key_value_grouper": {"group_by_keys": ["n", "meta.lang"]}},
     {"naive_reverse_grouper": {}}, {"clean_email_mapper": None}],
    [{"naive_grouper": None}],
    [{"naive_grouper": None}, {"naive_reverse_grouper": {}}],
])
def test_groupers_on_ray_blocks_equal_default_without_driver_gather(run_both, no_driver_gather, process):
    d, r = run_both(ROWS, process, override_num_blocks=5, keep_stats_in_res_ds=True)
    assert _bytes(r / "result.jsonl") == _bytes(d / "result.jsonl")
    out = read_jsonl(d / "result.jsonl")
    assert out, "some rows out"
    if process[-1].get("key_value_grouper"):  # the groups, in order of their first sample, rows in input order
        assert [g["meta"][0]["lang"] for g in out] == ["en", "zh", "fr", None]
        assert out[1]["id"] == list(range(1, 60, 4))


AGG_OP = textwrap.dedent('''
    from data_juicer.ops.base import Aggregator
    from data_juicer.ops.registry import OPERATORS
    from data_juicer.utils.constant import Fields


    @OPERATORS.register_module("count_group_aggregator")
    class CountGroupAggregator(Aggregator):
        """Writes a batched sample's size and first id into its batch meta."""

        def process_single(self, sample):
            sample[Fields.batch_meta] = {"n": len(sample[self.text_key]), "first": sample["id"][0]}
            return sample
''')


def test_grouper_aggregator_reverse_with_batch_meta_export(make_recipe, tmp_path, ray_local, no_driver_gather):
    op_file = tmp_path / "agg_ops.py"
    op_file.write_text(AGG_OP)
    out = {}
    for kind in ("default", "ray"):
        meta = tmp_path / kind / "meta" / "batch_meta.jsonl"
        process = [{"key_value_grouper": {"group_by_keys": ["meta.lang"]}}, {"count_group_aggregator": None},
                   {"naive_reverse_grouper": {"batch_meta_export_path": str(meta)}}]
        recipe = make_recipe(ROWS, process, executor_type=kind, export_path=str(tmp_path / kind / "result.jsonl"),
                             override_num_blocks=4, custom_operator_paths=[str(op_file)])
        assert main(["--config", recipe]) == 0, kind
        out[kind] = (_bytes(tmp_path / kind / "result.jsonl"), _bytes(meta))
        assert not [n for n in os.listdir(meta.parent) if n.startswith(".")], "no part folder left behind"
    assert out["ray"] == out["default"]
    assert out["ray"][1].decode().splitlines() == [json.dumps({"n": 15, "first": i}) for i in range(4)]
    rows = [json.loads(x) for x in out["ray"][0].decode().splitlines()]
    assert [x["id"] for x in rows[:3]] == [0, 4, 8]  # the groups' rows, group by group


def test_failed_rows_are_ledgered_per_block_in_row_order(run_both, tmp_path):
    op_file = tmp_path / "my_ops.py"
    op_file.write_text(CUSTOM_OP)
    rows = [{"id": f"s{i}", "text": f"sample {i} " + ("BOOM" if i % 7 == 3 else "fine text here")} for i in range(50)]
    d, r = run_both(rows, [{"explode_on_marker_mapper": None}, {"text_length_filter": {"min_len": 5}}],
                    custom_operator_paths=[str(op_file)], override_num_blocks=4)
    assert read_jsonl(r / "result.jsonl") == read_jsonl(d / "result.jsonl")
    lr = read_jsonl(os.path.join(_job(r), "errors.jsonl"))
    ld = read_jsonl(os.path.join(_job(d), "errors.jsonl"))
    assert [e["index"] for e in lr] == [3, 10, 17, 24, 31, 38, 45]  # in row order, though written per batch
    assert sorted(lr, key=lambda e: e["index"]) == sorted(ld, key=lambda e: e["index"])
    with open(os.path.join(_job(r), "summary.json")) as f:
        assert json.load(f)["errors_by_op"] == {"explode_on_marker_mapper": 7}
    assert not os.path.exists(os.path.join(_job(r), ".ledger-parts")) or \
        not os.listdir(os.path.join(_job(r), ".ledger-parts"))


def test_bad_json_line_on_ray_names_file_and_line(make_recipe, tmp_path, capsys, ray_local):
    src = write_jsonl(tmp_path / "data.jsonl", [{"id": 0, "text": "fine"}, {"id": 1, "text": "also fine"}])
    with open(src, "a", encoding="utf-8") as f:
        f.write('{"id": 2, "text": "broken\n')
    recipe = make_recipe(None, [{"text_length_filter": {"min_len": 1}}], executor_type="ray", dataset_path=str(src))
    assert main(["--config", recipe]) != 0
    err = capsys.readouterr().err
    assert "data.jsonl, line 3" in err and "not valid JSON" in err
    assert "Traceback" not in err


@pytest.mark.slow
def test_two_local_nodes_groupers_and_ledger_same_output(tmp_path):
    """Groupers (a shuffle of tasks over both nodes) and per-batch ledger parts on a 2-node cluster."""
    import subprocess
    import sys

    import yaml
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    (tmp_path / "my_ops.py").write_text(CUSTOM_OP + "\n" + AGG_OP)
    rows = [{"id": i, "text": f"sample {i} " + ("BOOM" if i % 11 == 4 else "text " * (i % 7)),
             "meta": {"lang": ["en", "zh", "fr"][i % 3]}} for i in range(600)]
    data = write_jsonl(tmp_path / "data.jsonl", rows)

    def recipe(name, **extra):
        steps = [{"explode_on_marker_mapper": None}, {"key_value_grouper": {"group_by_keys": ["meta.lang"]}},
                 {"count_group_aggregator": None},
                 {"naive_reverse_grouper": {"batch_meta_export_path": str(tmp_path / name / "meta.jsonl")}},
                 {"text_length_filter": {"min_len": 12}}]
        cfg = {"dataset_path": data, "export_path": str(tmp_path / name / "out.jsonl"),
               "custom_operator_paths": [str(tmp_path / "my_ops.py")], "process": steps, **extra}
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        return str(path)

    cmd = [sys.executable, "-m", "data_juicer.cli.process", "--config"]
    ref = subprocess.run(cmd + [recipe("ref")], capture_output=True, text=True, timeout=600, check=False)
    assert ref.returncode == 0, ref.stderr
    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": 1 << 30})
    try:
        cluster.add_node(num_cpus=1, object_store_memory=1 << 30)
        cluster.wait_for_nodes()
        res = subprocess.run(cmd + [recipe("two", executor_type="ray", ray_address=cluster.address,
                                           override_num_blocks=8)], capture_output=True, text=True, timeout=900,
                             check=False)
    finally:
        cluster.shutdown()
    assert res.returncode == 0, res.stderr
    names = sorted(n for n in os.listdir(tmp_path / "ref") if n.endswith(".jsonl"))
    assert "out.jsonl" in names and "meta.jsonl" in names
    assert sorted(n for n in os.listdir(tmp_path / "two") if n.endswith(".jsonl")) == names
    for name in names:
        assert _bytes(tmp_path / "two" / name) == _bytes(tmp_path / "ref" / name), name
    errs = read_jsonl(os.path.join(_job(tmp_path / "two"), "errors.jsonl"))
    assert [e["index"] for e in errs] == list(range(4, 600, 11))
    assert read_jsonl(tmp_path / "two" / "meta.jsonl")[0] == {"n": 182, "first": 0}  # 200 "en" rows, 18 failed
