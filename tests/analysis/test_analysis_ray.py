"""dj-analyze with executor_type: ray gives the same stats, tables and threshold figures as the default executor."""

import os

import pytest
import yaml

from data_juicer.cli.analyze import main as analyze
from tests.analysis.helpers import FILTERS, job_analysis_dir, rows
from tests.conftest import read_jsonl, write_jsonl

ray = pytest.importorskip("ray")
pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def ray_local():
    if not ray.is_initialized():
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield


@pytest.mark.slow  # starts a local Ray
def test_ray_analysis_matches_default(tmp_path, ray_local):
    data = write_jsonl(tmp_path / "data.jsonl", rows())
    outs = {}
    for kind in ("default", "ray"):
        recipe = {"project_name": "t", "np": 1, "dataset_path": data, "executor_type": kind,
                  "export_path": str(tmp_path / kind / "r.jsonl"), "process": FILTERS}
        path = tmp_path / f"{kind}.yaml"
        path.write_text(yaml.safe_dump(recipe, allow_unicode=True, sort_keys=False))
        assert analyze(["--config", str(path)]) == 0, kind
        folder = job_analysis_dir(tmp_path / kind)
        html = open(os.path.join(folder, "report.html"), encoding="utf-8").read()
        outs[kind] = (read_jsonl(tmp_path / kind / "r_stats.jsonl"),
                      open(os.path.join(folder, "overall.csv")).read(),
                      sorted(f for f in os.listdir(folder) if f.endswith(".png")),
                      html[html.index("<ul>"):html.index("</ul>")])
    assert outs["ray"] == outs["default"]
