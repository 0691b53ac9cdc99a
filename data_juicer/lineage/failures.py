"""Failures a call returns as values, and the outcomes an item can end in.

A call's function returns one output per input item. An output that is a ``RecordFailure``
fails that item alone; a ``GroupFailure`` fails it and suppresses its parent's other items for
the same call that have not been dispatched yet (items already in flight finish but do not
commit). Other parents go on.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Outcome(enum.StrEnum):
    """What a port holds for one entity once it is terminal.

    A ``StrEnum``: ``Outcome.FAILED == "failed"`` holds, so code written against the earlier
    string outcomes keeps working, but the engine only ever hands out members.
    """

    PRESENT = "present"  # a value
    DROPPED = "dropped"  # a filter took the entity out
    FAILED = "failed"  # the call failed on it (returned failure or an error after recovery)
    SUPPRESSED = "suppressed"  # a sibling's GroupFailure cancelled it


class FailureKind(enum.StrEnum):
    """Why a failure record exists."""

    RECORD = "record"  # the call returned RecordFailure for the item
    GROUP = "group"  # the call returned GroupFailure for the item
    ERROR = "error"  # the call raised, and recovery gave up on the item
    EXPAND = "expand"  # an expand got something that is not a list
    FILTER = "filter"  # a filter's predicate raised
    CHILD = "child"  # a reduce under on_child_failure=FAIL_PARENT: one of the children failed


class ChildFailure(enum.StrEnum):
    """What a ``reduce`` does when one of a parent's children FAILED or was SUPPRESSED.

    FAIL_PARENT (the default): the parent's reduced value is FAILED, with a CHILD failure record
    whose ``cause`` is the child's; the parent's other pending children are withdrawn.
    DROP_CHILD: the failed child is left out of the list, like a filtered one (its failure stays
    in the result's failures). KEEP_PARTIAL: the list holds every child as ``(Outcome, value)``.
    """

    FAIL_PARENT = "fail_parent"
    DROP_CHILD = "drop_child"
    KEEP_PARTIAL = "keep_partial"


# when a call or structural node sees several absent inputs, the most informative one wins
ABSENCE_PRIORITY = {Outcome.FAILED: 3, Outcome.SUPPRESSED: 2, Outcome.DROPPED: 1}


def worst(outcomes) -> Outcome:
    """The absence that an output inherits from its absent inputs (PRESENT when none is absent)."""
    best, rank = Outcome.PRESENT, 0
    for o in outcomes:
        if o is Outcome.PRESENT:
            continue
        r = ABSENCE_PRIORITY.get(o, 0)
        if r > rank:
            best, rank = o, r
    return best


@dataclass(frozen=True, slots=True)
class RecordFailure:
    """Returned in place of an output: this item failed; its siblings are not affected."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class GroupFailure:
    """Returned in place of an output: this item failed and its parent's pending siblings for
    this call are suppressed."""

    reason: str = ""


class LineageError(RuntimeError):
    """Base of the engine's errors."""


class LineageAbort(LineageError):
    """A call raised under the ``abort`` recovery policy."""

    def __init__(self, call: str, keys, cause: BaseException):
        self.call, self.keys, self.cause = call, keys, cause
        shown = ", ".join(str(k) for k in list(keys)[:3]) + (" ..." if len(keys) > 3 else "")
        super().__init__(f"call '{call}' raised {type(cause).__name__}: {cause} on a batch of {len(keys)} "
                         f"item(s) ({shown}); its recovery policy is 'abort' "
                         "(recovery mode 'split' or 'fail' records the failure and goes on)")


class LineageDeadlock(LineageError):
    """Nothing is ready or in flight, yet some items are not terminal."""

    def __init__(self, counters: dict):
        self.counters = counters
        lines = [f"  {name}: {c}" for name, c in counters.items()]
        super().__init__("the lineage run made no progress: nothing is ready or in flight but items are "
                         "unfinished. Progress counters:\n" + "\n".join(lines))
