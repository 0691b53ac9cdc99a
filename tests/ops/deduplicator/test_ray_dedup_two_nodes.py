"""The Ray deduplicators on a two-node local Ray cluster keep what their single-machine ops keep."""
import os

import pytest
from dedup_test_data import TEXTS, generated_corpus

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

DOCS = TEXTS + generated_corpus(300, seed=5) + TEXTS[:7]
PAIRS = [
    ("ray_document_deduplicator", "document_deduplicator", {"lowercase": True}, {"dedup_set_num": 4}),
    ("ray_bts_minhash_deduplicator", "document_minhash_deduplicator", {"window_size": 3, "num_permutations": 64},
     {"union_find_parallel_num": 4}),
]


def _rows():
    return [{"id": i, "text": t, Fields.row_index: i} for i, t in enumerate(DOCS)]  # the stable order the executors add


def _kept_locally(name, params):
    op = OPERATORS.get(name)(**params)
    out, _ = op.process(DJDataset.from_rows(_rows()).map_batches(op.compute_hash, batch_size=50))
    return sorted(out.column("id"))


@pytest.mark.slow
def test_two_nodes_keep_the_same_samples():
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": 1 << 30})
    try:
        cluster.add_node(num_cpus=1, object_store_memory=1 << 30)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
        for ray_name, local_name, params, ray_params in PAIRS:
            op = OPERATORS.get(ray_name)(**params, **ray_params)
            batch = op.compute_hash({k: [r[k] for r in _rows()] for k in _rows()[0]})
            table = [dict(zip(batch, vals)) for vals in zip(*batch.values())]
            ds = ray.data.from_items(table).repartition(8)  # blocks on both nodes: duplicates meet across nodes
            got = sorted(r["id"] for r in op.run_ray(ds).take_all())
            want = _kept_locally(local_name, params)
            assert got == want, ray_name
            assert len(got) < len(DOCS)
    finally:
        ray.shutdown()
        cluster.shutdown()
