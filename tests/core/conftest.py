"""``executor_type``: run an end-to-end test once per backend (default, then Ray on a local instance)."""
import os

import pytest


@pytest.fixture(params=["default", "ray"])
def executor_type(request):
    if request.param == "ray":
        ray = pytest.importorskip("ray")
        if not ray.is_initialized():  # the same local instance as tests/ray's ray_local
            os.environ.setdefault("RAY_AUTH_MODE", "disabled")
            ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    return request.param
