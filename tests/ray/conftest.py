"""A real local Ray (2 CPUs) for the Ray executor tests, started once per session."""
import os

import pytest

ray = pytest.importorskip("ray")


@pytest.fixture(scope="session")
def ray_local():
    if not ray.is_initialized():
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    # left running for the rest of the session; Ray shuts it down at exit


@pytest.fixture
def run_both(make_recipe, tmp_path, ray_local):
    """Run one recipe with the default executor and with Ray; return both exported folders."""
    from data_juicer.cli.process import main

    def _run(rows, process, suffix="jsonl", **globals_):
        outs = {}
        for kind in ("default", "ray"):
            export = tmp_path / kind / f"result.{suffix}"
            recipe = make_recipe(rows, process, executor_type=kind, export_path=str(export), **globals_)
            assert main(["--config", recipe]) == 0, kind
            outs[kind] = tmp_path / kind
        return outs["default"], outs["ray"]

    return _run
