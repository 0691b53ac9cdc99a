"""Every (state, event) pair of a work item, table-driven: the next state or a rejection."""
import itertools

import pytest

from data_juicer.lineage.state import Event, IllegalTransition, ItemState, step

W, R, F, D = "WAITING", "READY", "IN_FLIGHT", "DOOMED"
PR, DR, FA, SU = "PRESENT", "DROPPED", "FAILED", "SUPPRESSED"
EVENTS = ["INPUTS_PRESENT", "INPUT_DROPPED", "INPUT_FAILED", "INPUT_SUPPRESSED", "DISPATCH", "COMMIT", "FAIL",
          "REQUEUE", "SUPPRESS", "WITHDRAW", "SKIP"]
# rows: state; columns: EVENTS in order; None = rejected
EXPECTED = {
    W:  [R,    DR,   FA,   SU,   None, None, None, None, SU,   SU,   None],
    R:  [None, None, None, None, F,    None, None, None, SU,   SU,   None],
    F:  [None, None, None, None, None, PR,   FA,   R,    D,    D,    R],
    D:  [None, None, None, None, None, SU,   SU,   SU,   D,    D,    SU],
    PR: [None, None, None, None, None, None, None, None, PR,   PR,   None],
    DR: [None, None, None, None, None, None, None, None, DR,   DR,   None],
    FA: [None, None, None, None, None, None, None, None, FA,   FA,   None],
    SU: [None, None, None, None, None, None, None, None, SU,   SU,   None],
}
CASES = [(s, e, EXPECTED[s][i]) for s in EXPECTED for i, e in enumerate(EVENTS)]


def test_table_covers_the_whole_product():
    assert {s.name for s in ItemState} == set(EXPECTED)
    assert [e.name for e in Event] == EVENTS
    assert len(CASES) == len(ItemState) * len(Event)


@pytest.mark.parametrize("state,event,expected", CASES, ids=[f"{s}-{e}" for s, e, _ in CASES])
def test_transition(state, event, expected):
    if expected is None:
        with pytest.raises(IllegalTransition, match=f"{state} cannot take event {event}"):
            step(ItemState[state], Event[event])
    else:
        assert step(ItemState[state], Event[event]) is ItemState[expected]


def test_terminal_states_only_absorb_suppression_and_withdrawal():
    for s, e in itertools.product(ItemState, Event):
        if s.terminal and e not in (Event.SUPPRESS, Event.WITHDRAW):
            with pytest.raises(IllegalTransition):
                step(s, e)
