"""A two-node Ray cluster on this host (ray.cluster_utils.Cluster): the work spreads over both nodes,
the output is unchanged."""
import os
import subprocess
import sys
import textwrap

import pytest
import yaml

from data_juicer.cli.process import main
from tests.conftest import read_jsonl, write_jsonl

NODE_OP = textwrap.dedent('''
    from data_juicer.ops.base import Mapper
    from data_juicer.ops.registry import OPERATORS


    @OPERATORS.register_module("record_node_mapper")
    class RecordNodeMapper(Mapper):
        """Writes the Ray node id that processed each sample into ``node`` ('' off Ray)."""

        def process_batched(self, samples):
            import time

            time.sleep(0.1)  # enough work per batch that both nodes get some
            try:
                import ray

                node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else ""
            except Exception:
                node = ""
            samples["node"] = [node] * len(samples[self.text_key])
            return samples
''')


@pytest.mark.slow
def test_two_local_nodes_same_output(tmp_path):
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    rows = [{"id": i, "text": f"Sample {i % 500}: some text " + "word " * (i % 13)} for i in range(4000)]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    (tmp_path / "node_op.py").write_text(NODE_OP)
    process = [{"record_node_mapper": {"batch_size": 50}}, {"whitespace_normalization_mapper": None},
               {"words_num_filter": {"min_num": 4}}, {"document_deduplicator": None},
               {"topk_specified_field_selector": {"field_key": "id", "topk": 300}}]

    def recipe(name, **extra):
        cfg = {"dataset_path": data, "export_path": str(tmp_path / name / "out.jsonl"), "np": 2,
               "custom_operator_paths": [str(tmp_path / "node_op.py")], "process": process, **extra}
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        return str(path)

    assert main(["--config", recipe("ref")]) == 0
    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": 1, "include_dashboard": False,
                                      "object_store_memory": 2 << 30})
    try:
        cluster.add_node(num_cpus=1, object_store_memory=2 << 30)
        cluster.wait_for_nodes()
        res = subprocess.run([sys.executable, "-m", "data_juicer.cli.process", "--config",
                              recipe("two", executor_type="ray", ray_address=cluster.address,
                                     override_num_blocks=16)],
                             capture_output=True, text=True, timeout=600)
    finally:
        cluster.shutdown()
    assert res.returncode == 0, res.stderr
    ours, ref = read_jsonl(tmp_path / "two" / "out.jsonl"), read_jsonl(tmp_path / "ref" / "out.jsonl")
    assert len({r.pop("node") for r in ours}) == 2  # both nodes did work
    assert ours == [dict(r, node=None) and {k: v for k, v in r.items() if k != "node"} for r in ref]
