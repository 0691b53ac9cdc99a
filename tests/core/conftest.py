"""``executor_type``: run an end-to-end test once per backend (default, then Ray on a local instance)."""
import logging
import os
import sys

import pytest

_ray_ready = []


def _start_ray():
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():  # the same local instance as tests/ray's ray_local
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    if not _ray_ready:
        import ray.data

        ray.data.range(1).materialize()  # Ray Data sets up its loggers now
        # started inside a test, Ray's log handlers hold that test's captured stderr, which pytest
        # closes afterwards: point them at the process's stderr so later tests' logs do not fail
        for name in list(logging.root.manager.loggerDict):
            if name == "ray" or name.startswith("ray."):
                for h in logging.getLogger(name).handlers:
                    if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler):
                        h.setStream(sys.__stderr__)
        _ray_ready.append(True)


@pytest.fixture(params=["default", "ray"])
def executor_type(request):
    if request.param == "ray":
        _start_ray()
    return request.param
