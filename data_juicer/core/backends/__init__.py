"""Where the data lives while a recipe runs: Hugging Face ``datasets`` (``hf``) or Ray Data (``ray``).

The executor (``core/executor.py``) owns the run; a backend owns only what differs between the
two: loading, one pass of row-wise ops, dataset-level ops, the checkpoint store, export.
"""

from data_juicer.core.backends.base import Backend


def backend_class(executor_type: str) -> type:
    if executor_type == "ray":
        from data_juicer.core.backends.ray import RayBackend

        return RayBackend
    from data_juicer.core.backends.hf import HFBackend

    return HFBackend


__all__ = ["Backend", "backend_class"]
