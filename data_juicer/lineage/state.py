"""The life of one work item (a call applied to one entity) as a pure transition table.

States: WAITING (inputs not all terminal), READY (queued), IN_FLIGHT (dispatched), DOOMED
(in flight when a sibling's GroupFailure suppressed it: its report will not commit), and the
terminal outcomes PRESENT, DROPPED, FAILED, SUPPRESSED.

WITHDRAW (the parent already failed, so nothing can read the item) moves like SUPPRESS; SKIP is
a replica's report that it dropped a doomed item from a batch before calling the function.

The runtime changes a state only through ``step``; anything not in the table is rejected, so a
duplicate or stale report can never commit twice.
"""

from __future__ import annotations

import enum

from data_juicer.lineage.failures import Outcome


class ItemState(enum.Enum):
    WAITING = "waiting"
    READY = "ready"
    IN_FLIGHT = "in_flight"
    DOOMED = "doomed"
    PRESENT = "present"
    DROPPED = "dropped"
    FAILED = "failed"
    SUPPRESSED = "suppressed"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL

    @property
    def outcome(self) -> Outcome:
        return Outcome(self.value)


TERMINAL = frozenset({ItemState.PRESENT, ItemState.DROPPED, ItemState.FAILED, ItemState.SUPPRESSED})


class Event(enum.Enum):
    INPUTS_PRESENT = "inputs_present"  # every input has a value: queue it
    INPUT_DROPPED = "input_dropped"  # an absent input propagates its outcome
    INPUT_FAILED = "input_failed"
    INPUT_SUPPRESSED = "input_suppressed"
    DISPATCH = "dispatch"  # put into a physical batch
    COMMIT = "commit"  # the function returned a value
    FAIL = "fail"  # RecordFailure/GroupFailure returned, or an error after recovery
    REQUEUE = "requeue"  # an error that recovery retries (same batch or a split half)
    SUPPRESS = "suppress"  # a sibling returned GroupFailure
    WITHDRAW = "withdraw"  # the parent failed: its remaining children's work is taken out
    SKIP = "skip"  # the replica dropped the item from its batch without calling the function


class IllegalTransition(ValueError):
    def __init__(self, state: ItemState, event: Event):
        self.state, self.event = state, event
        super().__init__(f"work item in state {state.name} cannot take event {event.name}")


S, E = ItemState, Event
TRANSITIONS: dict[tuple[ItemState, Event], ItemState] = {
    (S.WAITING, E.INPUTS_PRESENT): S.READY,
    (S.WAITING, E.INPUT_DROPPED): S.DROPPED,
    (S.WAITING, E.INPUT_FAILED): S.FAILED,
    (S.WAITING, E.INPUT_SUPPRESSED): S.SUPPRESSED,
    (S.WAITING, E.SUPPRESS): S.SUPPRESSED,
    (S.READY, E.DISPATCH): S.IN_FLIGHT,
    (S.READY, E.SUPPRESS): S.SUPPRESSED,
    (S.IN_FLIGHT, E.COMMIT): S.PRESENT,
    (S.IN_FLIGHT, E.FAIL): S.FAILED,
    (S.IN_FLIGHT, E.REQUEUE): S.READY,
    (S.IN_FLIGHT, E.SUPPRESS): S.DOOMED,
    # a doomed item's report is consumed but never commits
    (S.DOOMED, E.COMMIT): S.SUPPRESSED,
    (S.DOOMED, E.FAIL): S.SUPPRESSED,
    (S.DOOMED, E.REQUEUE): S.SUPPRESSED,
    (S.DOOMED, E.SUPPRESS): S.DOOMED,
    # a GroupFailure leaves siblings that already finished as they are
    (S.PRESENT, E.SUPPRESS): S.PRESENT,
    (S.DROPPED, E.SUPPRESS): S.DROPPED,
    (S.FAILED, E.SUPPRESS): S.FAILED,
    (S.SUPPRESSED, E.SUPPRESS): S.SUPPRESSED,
    # withdrawal (the parent failed) takes queued and waiting items out, dooms in-flight ones
    (S.WAITING, E.WITHDRAW): S.SUPPRESSED,
    (S.READY, E.WITHDRAW): S.SUPPRESSED,
    (S.IN_FLIGHT, E.WITHDRAW): S.DOOMED,
    (S.DOOMED, E.WITHDRAW): S.DOOMED,
    (S.PRESENT, E.WITHDRAW): S.PRESENT,
    (S.DROPPED, E.WITHDRAW): S.DROPPED,
    (S.FAILED, E.WITHDRAW): S.FAILED,
    (S.SUPPRESSED, E.WITHDRAW): S.SUPPRESSED,
    # a replica told of the doom skips the item; a live item it skipped is queued again
    (S.DOOMED, E.SKIP): S.SUPPRESSED,
    (S.IN_FLIGHT, E.SKIP): S.READY,
}

ABSENT_INPUT_EVENT = {Outcome.DROPPED: E.INPUT_DROPPED, Outcome.FAILED: E.INPUT_FAILED,
                      Outcome.SUPPRESSED: E.INPUT_SUPPRESSED}


def step(state: ItemState, event: Event) -> ItemState:
    """The next state, or ``IllegalTransition``."""
    nxt = TRANSITIONS.get((state, event))
    if nxt is None:
        raise IllegalTransition(state, event)
    return nxt
