"""ray_repartition_pipeline: Ray-only; the default executor rejects it at validation, before reading data."""
import pytest
import yaml

from data_juicer.config.recipe import ConfigError, load_recipe
from data_juicer.ops.registry import OPERATORS


def test_rejected_by_the_default_executor_at_validation(tmp_path):
    (tmp_path / "d.jsonl").write_text('{"text": "a"}\n')
    cfg = {"dataset_path": str(tmp_path / "d.jsonl"), "export_path": str(tmp_path / "o.jsonl"),
           "process": [{"ray_repartition_pipeline": {"num_blocks": 4}}]}
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match="ray_repartition_pipeline.*executor_type: ray"):
        load_recipe(["--config", str(tmp_path / "r.yaml")])


def test_bad_num_blocks():
    with pytest.raises(ValueError, match="positive integer"):
        OPERATORS.get("ray_repartition_pipeline")(num_blocks=0)


def test_repartitions_a_ray_dataset():
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    ds = ray.data.from_items([{"text": str(i)} for i in range(20)])
    out = OPERATORS.get("ray_repartition_pipeline")(num_blocks=3).run_ray(ds)
    assert out.materialize().num_blocks() == 3
    assert sorted(r["text"] for r in out.take_all()) == sorted(str(i) for i in range(20))
