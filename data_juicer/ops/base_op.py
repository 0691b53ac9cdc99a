"""Compatibility path: custom ops written for Data-Juicer import their bases from here."""

from data_juicer.ops.base import OP, Aggregator, Deduplicator, Filter, Grouper, Mapper, Selector  # noqa: F401
from data_juicer.ops.registry import OPERATORS  # noqa: F401
