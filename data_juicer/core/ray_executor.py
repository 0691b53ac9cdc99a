"""``executor_type: ray``: the executor over the Ray Data backend (``core/backends/ray.py``).

Kept as a module for callers of ``RayExecutor``; the run itself is ``Executor.run``.
"""

from __future__ import annotations

from typing import Optional

from data_juicer.core.backends.ray import needs_actor  # noqa: F401  (importable from here, as before)
from data_juicer.core.executor import Executor
from data_juicer.core.ray_dataset import RayDataset, unify
from data_juicer.ops.schema import executor_rule


def ray_support(cls) -> Optional[str]:
    """None if ops of this class can run on Ray, else why not."""
    return executor_rule(cls, "ray")


def validate_for_ray(recipe) -> None:
    from data_juicer.ops.schema import check_executor_rules

    check_executor_rules(recipe.ops, "ray", recipe.config_path)


class RayExecutor(Executor):
    """``executor_type: ray``: the recipe's passes as Ray Data ``map_batches``, on a Ray cluster."""

    def __init__(self, recipe):
        from data_juicer.core.backends.ray import RayBackend

        validate_for_ray(recipe)
        super().__init__(recipe, RayBackend)


__all__ = ["RayExecutor", "RayDataset", "validate_for_ray", "ray_support", "unify", "needs_actor"]
