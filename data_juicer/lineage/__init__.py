"""Lineage engine: multi-grain stages with expand/reduce, cross-parent batching and typed failures.

Build a ``Program`` (domains, calls and the primitives expand / reduce / filter / broadcast),
``compile()`` it into a ``Plan`` (validated; ``plan.describe()`` prints it), then run it with
``run_local`` / ``iter_local`` or, on Ray, ``data_juicer.lineage.ray_executor.run_ray`` /
``iter_ray`` (the ``iter_*`` forms yield each root as it finishes). A parent whose child failed
is FAILED unless its reduce says otherwise (``on_child_failure``). This package imports no Ray;
only ``ray_executor`` does. See docs/lineage.md.
"""

from data_juicer.lineage.compiler import Plan, ProgramError, compile_program
from data_juicer.lineage.failures import (
    ChildFailure,
    FailureKind,
    GroupFailure,
    LineageAbort,
    LineageDeadlock,
    LineageError,
    Outcome,
    RecordFailure,
)
from data_juicer.lineage.local import LocalRun, iter_local, run_local
from data_juicer.lineage.model import Call, Domain, EntityKey, Port, Program, Recovery
from data_juicer.lineage.runtime import Batch, FailureRecord, Finished, LineageResult, LineageRuntime

__all__ = ["Program", "Call", "Recovery", "Domain", "EntityKey", "Port", "Plan", "ProgramError", "compile_program",
           "Outcome", "ChildFailure", "FailureKind", "FailureRecord", "Finished", "RecordFailure", "GroupFailure",
           "LineageError", "LineageAbort", "LineageDeadlock",
           "LineageRuntime", "LineageResult", "Batch", "run_local", "iter_local", "LocalRun"]
