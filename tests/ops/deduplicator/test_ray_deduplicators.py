"""The ray_* deduplicators: the kept samples of their single-machine counterparts, on the default
executor (their ``process``) and on local Ray (their ``run_ray``)."""
import pytest
from dedup_test_data import TEXTS, generated_corpus

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields, HashKeys

DOCS = TEXTS + generated_corpus(150, seed=11) + TEXTS[:5]
UIDS = [(i * 37 + 5) % len(DOCS) for i in range(len(DOCS))]
PAIRS = [
    ("ray_document_deduplicator", "document_deduplicator", {"lowercase": True}),
    ("ray_bts_minhash_deduplicator", "document_minhash_deduplicator", {"window_size": 3, "num_permutations": 64}),
    ("ray_bts_minhash_cpp_deduplicator", "document_minhash_deduplicator", {}),
    ("ray_bts_minhash_deduplicator_with_uid", "document_minhash_deduplicator_with_uid", {"jaccard_threshold": 0.5}),
]


def rows():
    return [{"id": i, "text": t, HashKeys.uid: u, Fields.row_index: i} for i, (t, u) in enumerate(zip(DOCS, UIDS))]


def kept_locally(name, params):
    op = OPERATORS.get(name)(**params)
    out, _ = op.process(DJDataset.from_rows(rows()).map_batches(op.compute_hash, batch_size=40))
    return out.column("id")


@pytest.mark.parametrize("ray_name,local_name,params", PAIRS)
def test_default_executor_keeps_what_the_local_op_keeps(ray_name, local_name, params):
    kept = kept_locally(ray_name, params)
    assert kept == kept_locally(local_name, params)
    assert len(kept) < len(DOCS)


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="backend 'redis'"):
        OPERATORS.get("ray_document_deduplicator")(backend="redis")
    with pytest.raises(ValueError, match="integer or 'auto'"):
        OPERATORS.get("ray_document_deduplicator")(dedup_set_num="many")
    with pytest.raises(ValueError, match="at least 1"):
        OPERATORS.get("ray_bts_minhash_deduplicator")(union_find_parallel_num=0)


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


@pytest.mark.slow
@pytest.mark.parametrize("ray_name,local_name,params", PAIRS)
def test_run_ray_keeps_what_the_local_op_keeps(local_ray, ray_name, local_name, params):
    import ray.data

    op = OPERATORS.get(ray_name)(union_find_parallel_num=3, **params) if "minhash" in ray_name else \
        OPERATORS.get(ray_name)(dedup_set_num=3, **params)
    batch = op.compute_hash({k: [r[k] for r in rows()] for k in rows()[0]})
    table = [dict(zip(batch, vals)) for vals in zip(*batch.values())]
    ds = ray.data.from_items(table).repartition(7)  # several blocks: duplicates meet across blocks
    out = op.run_ray(ds)
    got = sorted(r["id"] for r in out.take_all())
    assert got == sorted(kept_locally(local_name, params))


@pytest.mark.slow
def test_run_ray_media_keeps_the_first_and_samples_without_media(local_ray, tmp_path):
    import ray.data
    from media_test_data import synthetic_images

    folder = synthetic_images(tmp_path)
    names = ["syn_rgb.png", "syn_flat.png", "syn_rgb_small.png", None, "syn_rgb.png", None, "syn_checker.png"]
    data = [{"id": i, "images": [str(folder / n)] if n else [], Fields.row_index: i} for i, n in enumerate(names)]
    op = OPERATORS.get("ray_image_deduplicator")(method="dhash")
    batch = op.compute_hash({k: [r[k] for r in data] for k in data[0]})
    table = [dict(zip(batch, vals)) for vals in zip(*batch.values())]
    out = op.run_ray(ray.data.from_items(table).repartition(3))
    assert sorted(r["id"] for r in out.take_all()) == [0, 1, 3, 5, 6]
