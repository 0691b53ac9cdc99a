"""Lineage engine: multi-grain stages with expand/reduce, cross-parent batching and typed failures.

Build a ``Program`` (domains, calls and the primitives expand / reduce / filter / broadcast),
``compile()`` it into a ``Plan`` (validated; ``plan.describe()`` prints it), then run it with
``run_local`` or, on Ray, ``data_juicer.lineage.ray_executor.run_ray``. This package imports no
Ray; only ``ray_executor`` does. See docs/lineage.md.
"""

from data_juicer.lineage.compiler import Plan, ProgramError, compile_program
from data_juicer.lineage.failures import (
    GroupFailure,
    LineageAbort,
    LineageDeadlock,
    LineageError,
    Outcome,
    RecordFailure,
)
from data_juicer.lineage.local import run_local
from data_juicer.lineage.model import Call, Domain, EntityKey, Port, Program, Recovery
from data_juicer.lineage.runtime import Batch, LineageResult, LineageRuntime

__all__ = ["Program", "Call", "Recovery", "Domain", "EntityKey", "Port", "Plan", "ProgramError", "compile_program",
           "Outcome", "RecordFailure", "GroupFailure", "LineageError", "LineageAbort", "LineageDeadlock",
           "LineageRuntime", "LineageResult", "Batch", "run_local"]
