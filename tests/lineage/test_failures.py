"""Failure semantics: a parent whose child failed is FAILED unless the reduce says otherwise;
withdrawal of the failed parent's remaining work; typed failures reachable in the result."""
import random

import pytest

from data_juicer.lineage import (
    Call,
    ChildFailure,
    FailureKind,
    GroupFailure,
    LineageRuntime,
    Outcome,
    Program,
    RecordFailure,
    run_local,
)
from data_juicer.lineage.state import ItemState

PR, DR, FA, SU = Outcome.PRESENT, Outcome.DROPPED, Outcome.FAILED, Outcome.SUPPRESSED


def score(xs):
    return [RecordFailure(f"bad {x}") if x == "bad" else x * 2 for x in xs]


def program(on_child_failure=None, batch_size=4, fn=score, second=False, cap=None):
    p = Program("f")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    c = p.expand(p.input("items"), "chunk", out="c")
    s = p.call(Call("score", fn, batch_size=batch_size, max_in_flight_per_parent=cap), c, out="s")
    if second:
        s = p.call(Call("after", lambda xs: [x + 1 for x in xs], batch_size=batch_size), s, out="after")
    kw = {} if on_child_failure is None else {"on_child_failure": on_child_failure}
    p.output("scores", p.reduce(s, "doc", out="r", **kw))
    return p.compile()


ROOTS = [{"items": [0, 1, 2, "bad", 4, 5, 6, 7, 8, 9]}, {"items": [1, 2]}, {"items": []}]


def test_a_program_that_does_not_mention_failures_fails_the_parent():
    res = run_local(program(), ROOTS)
    assert res.outcomes("scores") == [FA, PR, PR]
    assert res.values("scores") == [None, [2, 4], []]
    assert res.ok == [1, 2] and res.present("scores") == [[2, 4], []]
    assert res.outcome(0) is FA
    rec = res.failed[0]
    assert (rec.kind, rec.key.path, rec.call) == (FailureKind.CHILD, (0,), "r")
    assert [(r.kind, r.key.path, r.name) for r in rec.chain()] == [(FailureKind.CHILD, (0,), "r"),
                                                                   (FailureKind.RECORD, (0, 3), "score")]
    assert rec.reason == "child chunk[0, 3] failed (bad bad)"
    assert res.ledger_entries([{"id": "a"}, {"id": "b"}, {"id": "c"}]) == [{
        "op": "score", "error_type": "record", "root": 0, "entity": "chunk[0, 3]", "sample": {"id": "a"},
        "message": "child at r doc[0]: child chunk[0, 3] failed (bad bad) <- record at score chunk[0, 3]: bad bad"}]


def test_drop_child_leaves_the_failed_child_out():
    res = run_local(program(ChildFailure.DROP_CHILD), ROOTS)
    assert res.outcomes("scores") == [PR, PR, PR]
    assert res.values("scores") == [[0, 2, 4, 8, 10, 12, 14, 16, 18], [2, 4], []]
    assert res.failed == {}
    assert [(f.kind, f.key.path) for f in res.failures] == [(FailureKind.RECORD, (0, 3))]  # still reported


def test_keep_partial_gives_every_child_with_its_outcome_enum():
    res = run_local(program("keep_partial"), ROOTS)
    got = res.values("scores")[0]
    assert [o for o, _ in got] == [PR, PR, PR, FA, PR, PR, PR, PR, PR, PR]
    assert all(isinstance(o, Outcome) for o, _ in got)
    assert got[3] == (FA, None) and got[4] == (PR, 8)
    assert got[3][0] == "failed"  # a StrEnum: code written against the old strings still works


def test_outcomes_true_is_keep_partial_and_a_bad_policy_is_named():
    p = Program("f")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    node_port = p.reduce(p.expand(p.input("items"), "chunk"), "doc", outcomes=True)
    assert p.nodes[-1].on_child_failure is ChildFailure.KEEP_PARTIAL and node_port.name.startswith("reduce_doc")
    with pytest.raises(ValueError, match="on_child_failure must be one of fail_parent, drop_child, keep_partial, "
                                         "got 'partial'"):
        p.reduce("x", "doc", on_child_failure="partial")


def test_the_plan_describes_each_reduce_policy():
    assert "reduce s -> r   [on_child_failure=fail_parent]" in program().describe()
    assert "[on_child_failure=drop_child]" in program("drop_child").describe()


def test_failed_parent_withdraws_its_queued_and_waiting_children_and_dooms_in_flight_ones():
    rt = LineageRuntime(program(batch_size=2, second=True, cap=0))
    rt.add_root({"items": [0, "bad", 2, 3, 4, 5]})
    rt.add_root({"items": [6, 7]})
    b1, b2 = rt.next_batch("s"), rt.next_batch("s")  # (0,0),(0,1) and (0,2),(0,3): in flight
    assert rt.report(b1, score(*b1.args)) == 2
    assert rt.completed == [0]  # failed at once: it does not wait for its other children
    assert rt.root_outputs(0) == {"scores": (FA, None)}
    st = {k.path: rt.items[("s", k)].state for k in [b2.keys[0], b2.keys[1]]}
    assert set(st.values()) == {ItemState.DOOMED}
    assert rt.items[("s", rt.roots[0]._replace(domain="chunk", path=(0, 4)))].state is ItemState.SUPPRESSED
    # the downstream call's items of the failed parent are withdrawn too (they were waiting)
    assert rt.items[("after", rt.roots[0]._replace(domain="chunk", path=(0, 0)))].state is ItemState.SUPPRESSED
    assert rt.take_doomed() == [("s", k) for k in b2.keys]
    assert rt.take_doomed() == []
    b3 = rt.next_batch("s")
    assert [k.path for k in b3.keys] == [(1, 0), (1, 1)]  # (0,4) and (0,5) never reach a batch
    assert rt.report(b2, score(*b2.args)) == 2  # consumed, not committed
    assert rt.items[("s", b2.keys[0])].state is ItemState.SUPPRESSED
    rt.report(b3, score(*b3.args))
    while (b := rt.next_batch("after")) is not None:
        assert all(k.path[0] == 1 for k in b.keys)
        rt.report(b, [x + 1 for x in b.args[0]])
    assert rt.done and rt.root_outputs(1) == {"scores": (PR, [13, 15])}
    c, a = rt.counters["score"], rt.counters["after"]
    assert (c.withdrawn, c.never_dispatched, c.doomed, c.items) == (2, 2, 2, 6)
    # 'after': (0,0) was queued, (0,2)-(0,5) waited on 'score'; (0,1) failed through its input
    assert (a.withdrawn, a.items) == (5, 2)


def test_skipped_items_of_a_batch_end_suppressed_and_the_rest_commits():
    rt = LineageRuntime(program(batch_size=4))
    rt.add_root({"items": ["bad", 1]})
    rt.add_root({"items": [2, 3]})
    b1, b2 = rt.next_batch("s"), rt.next_batch("s")
    assert b2 is None and len(b1) == 4
    rt2 = LineageRuntime(program(batch_size=2, cap=0))
    rt2.add_root({"items": ["bad", 1, 2]})
    rt2.add_root({"items": [3]})
    a, b = rt2.next_batch("s"), rt2.next_batch("s")  # a: (0,0),(0,1); b: (0,2),(1,0)
    rt2.report(a, score(*a.args))
    assert rt2.take_doomed() == [("s", b.keys[0])]
    # the replica skipped position 0 (doomed) and ran position 1 only
    assert rt2.report(b, [6], skipped=(0,)) == 2
    assert rt2.items[("s", b.keys[0])].state is ItemState.SUPPRESSED
    assert rt2.root_outputs(1) == {"scores": (PR, [6])}
    assert rt2.counters["score"].skipped == 1


def test_group_failure_fails_the_parent_by_default_and_its_cause_is_the_trigger():
    def fn(xs):
        return [GroupFailure("poison") if x == "p" else x for x in xs]

    res = run_local(program(fn=fn, batch_size=1), [{"items": [1, "p", 3]}, {"items": [4]}])
    assert res.outcomes("scores") == [FA, PR]
    assert [(r.kind, r.key.path) for r in res.failed[0].chain()] == [(FailureKind.CHILD, (0,)),
                                                                     (FailureKind.GROUP, (0, 1))]
    assert res.counters["score"].items == 3  # (0,2) was never dispatched


def test_failure_three_levels_down_reaches_the_root_with_its_chain():
    p = Program("deep")
    p.domain("doc")
    p.domain("page", parent="doc")
    p.domain("line", parent="page")
    ln = p.expand(p.expand(p.input("pages"), "page"), "line")
    s = p.call(Call("score", score), ln, out="s")
    p.output("o", p.reduce(p.reduce(s, "page", out="per_page"), "doc", out="per_doc"))
    res = run_local(p.compile(), [{"pages": [[1], [2, "bad"], [3]]}, {"pages": [[1, 2]]}])
    assert res.values("o") == [None, [[2, 4]]]
    assert [(r.kind, r.key.path) for r in res.failed[0].chain()] == [
        (FailureKind.CHILD, (0,)), (FailureKind.CHILD, (0, 1)), (FailureKind.RECORD, (0, 1, 1))]


@pytest.mark.parametrize("seed", range(20))
def test_no_silently_partial_parent_under_random_failures(seed):
    rng = random.Random(seed)
    roots = [{"items": [rng.choice([1, 2, 3, "bad"]) if rng.random() < 0.15 else rng.randrange(9)
                        for _ in range(rng.randrange(12))]} for _ in range(15)]
    res = run_local(program(batch_size=rng.randint(1, 6)), roots)
    for r, v, o in zip(roots, res.values("scores"), res.outcomes("scores")):
        if "bad" in r["items"]:
            assert o is FA and v is None
        else:
            assert o is PR and v == [x * 2 for x in r["items"]]


def test_items_of_one_parent_in_flight_are_capped_and_other_parents_fill_the_batches():
    rt = LineageRuntime(program(batch_size=2))  # default cap: batch_size x replicas = 2
    rt.add_root({"items": list(range(6))})
    rt.add_root({"items": [6, 7, 8]})
    b1, b2 = rt.next_batch("s"), rt.next_batch("s")
    assert [k.path for k in b1.keys] == [(0, 0), (0, 1)] and [k.path for k in b2.keys] == [(1, 0), (1, 1)]
    assert rt.next_batch("s") is None  # both parents are at their cap: the rest waits, in order
    rt.report(b1, score(*b1.args))
    assert [k.path for k in rt.next_batch("s").keys] == [(0, 2), (0, 3)]
    rt3 = LineageRuntime(program(batch_size=2, cap=3))
    rt3.add_root({"items": list(range(6))})
    rt3.add_root({"items": [6]})
    assert [k.path for k in rt3.next_batch("s").keys] == [(0, 0), (0, 1)]
    assert [k.path for k in rt3.next_batch("s").keys] == [(0, 2), (1, 0)]
    assert rt3.next_batch("s") is None
    with pytest.raises(ValueError, match="max_in_flight_per_parent must be >= 0, got -1"):
        Call("x", score, max_in_flight_per_parent=-1)


def test_capped_single_policy_takes_the_next_parent_with_room():
    p = Program("single")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    s = p.call(Call("score", score, batch_size=2, policy="single"), p.expand(p.input("items"), "chunk"), out="s")
    p.output("o", p.reduce(s, "doc"))
    rt = LineageRuntime(p.compile())
    rt.add_root({"items": [1, 2, 3, 4]})
    rt.add_root({"items": [5]})
    assert [k.path for k in rt.next_batch("s").keys] == [(0, 0), (0, 1)]
    assert [k.path for k in rt.next_batch("s").keys] == [(1, 0)]
    assert rt.next_batch("s") is None


def test_a_batch_that_will_wait_at_a_busy_replica_takes_no_parent_already_in_flight():
    rt = LineageRuntime(program(batch_size=2, cap=0))
    rt.add_root({"items": [0, 1, 2, 3]})
    rt.add_root({"items": [4, 5, 6]})
    assert [k.path for k in rt.next_batch("s").keys] == [(0, 0), (0, 1)]
    assert [k.path for k in rt.next_batch("s", queued=True).keys] == [(1, 0), (1, 1)]
    assert rt.next_batch("s", queued=True) is None  # both parents are in flight
    assert [k.path for k in rt.next_batch("s").keys] == [(0, 2), (0, 3)]  # an idle replica takes them
