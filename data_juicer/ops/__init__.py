"""Operators: one file per op under ``<type>/<op_name>.py``, registered by name."""

from data_juicer.ops.base import OP, Aggregator, Deduplicator, Filter, Grouper, Mapper, Selector
from data_juicer.ops.registry import OPERATORS, UnknownOpError

__all__ = ["OP", "Mapper", "Filter", "Deduplicator", "Selector", "Grouper", "Aggregator", "OPERATORS",
           "UnknownOpError", "load_ops"]


def load_ops(process_list: list) -> list[OP]:
    """Instantiate ops from a recipe ``process`` list of ``{name: {params}}`` items."""
    ops = []
    for item in process_list:
        (name, params), = item.items()
        ops.append(OPERATORS.get(name)(**(params or {})))
    return ops
