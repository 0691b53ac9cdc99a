"""The local runtime hands finished parents over as they complete: an iterator and a callback,
in completion or input order (bounded reorder window), timestamps on the caller's clock."""
import itertools

import pytest

from data_juicer.lineage import Call, Outcome, Program, RecordFailure, run_local
from data_juicer.lineage.local import iter_local


def program(batch_size=2):
    p = Program("s")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    c = p.expand(p.input("items"), "chunk")
    s = p.call(Call("score", lambda xs: [RecordFailure("r") if x == "r" else x * 2 for x in xs],
                    batch_size=batch_size), c)
    p.output("scores", p.reduce(s, "doc"))
    return p.compile()


# parent 0 is long: the FIFO runs its children first; parent 2 is empty: it finishes on admission
ROOTS = [{"items": list(range(9))}, {"items": [1]}, {"items": []}, {"items": ["r", 1]}, {"items": [2, 3]}]


class Tick:
    """A caller's clock: 100, 101, 102..."""

    def __init__(self):
        self.n = itertools.count(100)

    def __call__(self):
        return float(next(self.n))


def test_completion_order_iterator_yields_each_parent_as_it_finishes():
    got = list(iter_local(program(), ROOTS, clock=Tick()))
    assert [f.index for f in got] == [2, 0, 1, 3, 4]
    assert [f.outcome for f in got] == [Outcome.PRESENT, Outcome.PRESENT, Outcome.PRESENT, Outcome.FAILED,
                                        Outcome.PRESENT]
    assert got[0].values == {"scores": []} and got[3].values == {"scores": None}
    assert got[3].failure.origin.reason == "r" and not got[3].ok
    ats = [f.at for f in got]
    assert ats == sorted(ats) and ats[0] >= 100.0


def test_a_parent_is_handed_over_before_the_slowest_one_has_run():
    calls = []

    def score(xs):
        calls.append(xs[0])
        return [x * 2 for x in xs]

    p = Program("s")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    p.output("scores", p.reduce(p.call(Call("score", score, batch_size=1), p.expand(p.input("items"), "chunk")),
                                "doc"))
    stream = iter_local(p.compile(), [{"items": [7]}, {"items": list(range(50))}])
    first = next(stream)
    assert (first.index, first.values, calls) == (0, {"scores": [14]}, [7])  # the big parent has not started
    assert next(stream).index == 1 and len(calls) == 51


@pytest.mark.parametrize("window", [1, 2, 5])
def test_input_order_with_a_bounded_reorder_window(window):
    admitted = []

    def roots():
        for i, r in enumerate(ROOTS):
            admitted.append(i)
            yield r

    stream = iter_local(program(), roots(), order="input", window=window)
    out = []
    for f in stream:
        out.append(f.index)
        # never more than `window` roots admitted beyond the next one to hand over
        assert len(admitted) - len(out) <= window
    assert out == [0, 1, 2, 3, 4]
    assert stream.result.values("scores")[4] == [4, 6]


def test_run_local_callback_and_result_times_on_the_callers_clock():
    seen = []
    res = run_local(program(), ROOTS, on_parent=lambda f: seen.append((f.index, f.at)), clock=Tick())
    assert [i for i, _ in seen] == [2, 0, 1, 3, 4]
    assert res.started_at == 100.0
    assert res.completed_at == sorted(res.completed_at) and res.completed_at[0] > 100.0
    assert res.first_completed_s == res.completed_at[0] - 100.0
    assert res.completion_order == [2, 0, 1, 3, 4]


def test_bad_order_is_named():
    with pytest.raises(ValueError, match="order must be 'completion' or 'input', got 'fifo'"):
        iter_local(program(), ROOTS, order="fifo")
