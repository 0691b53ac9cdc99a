"""The Ray backend's start-up: Ray starts in a thread while the driver builds its ops, its errors
surface in the step that needs Ray, and the worker warm-up builds and runs the recipe's text ops."""
import threading

import pytest

from data_juicer.core.backends import ray as rb
from data_juicer.ops.build import resolve_entry


def _backend(start_ray):
    b = rb.RayBackend.__new__(rb.RayBackend)
    b._own_ray, b._num_cpus = False, 1
    b._start_ray = start_ray
    return b


def test_start_returns_before_ray_is_up_and_ready_waits():
    gate, ran = threading.Event(), []

    def slow_start():
        gate.wait(5)
        ran.append(threading.current_thread().name)

    b = _backend(slow_start)
    b.start()
    assert ran == []  # start() did not wait for Ray
    gate.set()
    b._ready()
    assert ran == ["dj-ray-start"]
    starter = b._starter
    assert starter.is_alive()  # the thread that started Ray's daemons lives until stop (they die with it)
    b.stop()
    assert not starter.is_alive()


def test_start_error_raised_where_ray_is_needed():
    def broken():
        raise ConnectionError("no Ray cluster at 10.0.0.9:6379")

    b = _backend(broken)
    b.start()
    with pytest.raises(ConnectionError, match="10.0.0.9:6379"):
        b.workers
    b.stop()  # the error was raised already: stop does not raise it again


def test_warm_up_builds_and_runs_only_text_ops_without_models():
    from data_juicer.ops.base import OP

    names = ["whitespace_normalization_mapper", "words_num_filter", "document_deduplicator"]
    entries = [resolve_entry({n: {}}, {}, f"process[{i}]") for i, n in enumerate(names)]
    assert all(rb._warmable(e.cls) for e in entries)

    class ModelOp(OP):
        uses_model = True

    assert not rb._warmable(ModelOp)
    out = rb._warm_up_worker(entries, "text", "/tmp")
    assert out.column("n").to_pylist() == [3]
