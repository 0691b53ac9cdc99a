"""The pool sheds the driver's freed memory before it forks (a worker inherits the driver's whole heap)."""
import numpy as np

from data_juicer.core.backends import hf_pool


def _anon_mb() -> float:
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return -1.0


def test_garbage_cycles_are_freed_before_the_fork():
    import gc

    gc.disable()
    try:
        a = {"data": np.ones(80 * 1024 * 1024 // 8)}  # 80 MB held only by a reference cycle
        a["self"] = a
        del a
        before = _anon_mb()
        hf_pool._shed_memory()
        after = _anon_mb()
    finally:
        gc.enable()
    assert before - after > 60  # the cycle's 80 MB went back to the system
