"""Semantics of the runtime, driven batch by batch as an executor would."""
import pytest

from data_juicer.lineage import (
    Call,
    GroupFailure,
    LineageAbort,
    LineageDeadlock,
    LineageRuntime,
    Outcome,
    Program,
    RecordFailure,
    Recovery,
    run_local,
)

PR, DR, FA, SU = Outcome.PRESENT, Outcome.DROPPED, Outcome.FAILED, Outcome.SUPPRESSED


def double(xs):
    return [x * 2 for x in xs]


def chunk_program(batch_size=2, policy="any", recovery=Recovery(), fn=double, outcomes=False, pass_keys=False,
                  on_child_failure="fail_parent", cap=0):
    p = Program("t")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    items = p.input("items")
    c = p.expand(items, "chunk", out="c")
    s = p.call(Call("score", fn, batch_size=batch_size, policy=policy, recovery=recovery, pass_keys=pass_keys,
                    max_in_flight_per_parent=cap), c, out="s")
    p.output("scores", p.reduce(s, "doc", out="r", outcomes=outcomes, on_child_failure=on_child_failure))
    return p.compile()


def keys_of(batch):
    return [k.path for k in batch.keys]


def test_batches_mix_parents_under_any_and_not_under_single():
    rt = LineageRuntime(chunk_program(batch_size=3))
    rt.add_root({"items": [1, 2]})
    rt.add_root({"items": [3, 4]})
    assert keys_of(rt.next_batch("s")) == [(0, 0), (0, 1), (1, 0)]
    rt = LineageRuntime(chunk_program(batch_size=3, policy="single"))
    rt.add_root({"items": [1, 2]})
    rt.add_root({"items": [3, 4, 5, 6]})
    assert [keys_of(rt.next_batch("s")) for _ in range(3)] == [[(0, 0), (0, 1)], [(1, 0), (1, 1), (1, 2)],
                                                               [(1, 3)]]
    assert rt.next_batch("s") is None


def test_a_parent_resolves_as_soon_as_its_own_children_are_terminal():
    rt = LineageRuntime(chunk_program(batch_size=2))
    rt.add_root({"items": [1, 2]})
    rt.add_root({"items": [3, 4, 5]})
    b1, b2 = rt.next_batch("s"), rt.next_batch("s")
    rt.report(b2, double(*b2.args))  # parent 1's first two children
    assert rt.completed == []
    rt.report(b1, double(*b1.args))  # parent 0 is complete; parent 1 still has one child queued
    assert rt.completed == [0]
    assert rt.root_outputs(0) == {"scores": (PR, [2, 4])}
    b3 = rt.next_batch("s")
    rt.report(b3, double(*b3.args))
    assert rt.completed == [0, 1] and rt.done
    assert rt.root_outputs(1) == {"scores": (PR, [6, 8, 10])}


def test_empty_expand_gives_empty_list_and_absent_parent_propagates():
    p = Program("t")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    x = p.input("x")
    parts = p.call(Call("parts", lambda xs: [RecordFailure("neg") if v < 0 else list(range(v)) for v in xs]), x)
    kept = p.filter(parts, where=lambda v: len(v) != 1)
    c = p.expand(kept, "chunk")
    s = p.call(Call("sq", lambda vs: [v * v for v in vs]), c)
    r = p.reduce(s, "doc")
    p.output("r", r)
    p.output("n", p.call(Call("n", lambda rs: [len(v) for v in rs]), r))
    res = run_local(p.compile(), [{"x": 3}, {"x": 0}, {"x": -1}, {"x": 1}, {"x": "oops"}])
    assert res.values("r") == [[0, 1, 4], [], None, None, None]
    assert res.outcomes("r") == [PR, PR, FA, DR, FA]
    assert res.outcomes("n") == [PR, PR, FA, DR, FA]
    assert [(f.call, f.key.path, f.kind) for f in res.failures] == [("parts_0", (2,), "record"),
                                                                    ("parts_0", (4,), "error")]
    assert res.failures[1].reason.startswith("TypeError:")


def test_filter_by_mask_port_and_broadcast_across_two_levels():
    p = Program("t")
    p.domain("doc")
    p.domain("page", parent="doc")
    p.domain("line", parent="page")
    d = p.input("pages")
    title = p.input("title")
    pg = p.expand(d, "page")
    ln = p.expand(pg, "line")
    t = p.broadcast(title, "line")
    tagged = p.call(Call("tag", lambda a, b: [f"{t}:{x}" for x, t in zip(a, b)]), ln, t)
    mask = p.call(Call("long", lambda a: [len(x) > 1 for x in a]), ln)
    kept = p.filter(tagged, mask)
    per_page = p.reduce(kept, "page")
    p.output("pages", p.reduce(per_page, "doc"))
    res = run_local(p.compile(), [{"pages": [["a", "bb"], [], ["ccc"]], "title": "T"}])
    assert res.values("pages") == [[["T:bb"], [], ["T:ccc"]]]


def test_group_failure_suppresses_pending_siblings_and_in_flight_ones_do_not_commit():
    def fn(xs, keys):
        return [GroupFailure("poison") if x == "poison" else x.upper() for x in xs]

    plan = chunk_program(batch_size=2, fn=fn, outcomes=True, pass_keys=True)
    rt = LineageRuntime(plan)
    rt.add_root({"items": ["poison", "a", "b", "c", "d"]})
    rt.add_root({"items": ["e", "f", "g"]})
    b1, b2 = rt.next_batch("s"), rt.next_batch("s")  # parent 0's children 0-1, then 2-3: all in flight
    rt.report(b1, fn(*b1.args, keys=b1.keys))
    assert rt.completed == [0]  # children 2-3 are doomed, 4 never runs: the parent does not wait
    assert rt.root_outputs(0)["scores"] == (PR, [("failed", None)] + [("suppressed", None)] * 4)
    c = rt.counters["s"]
    assert (c.never_dispatched, c.doomed) == (1, 3)
    assert rt.report(b2, fn(*b2.args, keys=b2.keys)) == 2  # consumed, not committed
    assert rt.root_outputs(0)["scores"][1][2] == ("suppressed", None)
    while (b := rt.next_batch("s")) is not None:
        assert all(k.path[0] == 1 for k in b.keys)
        rt.report(b, fn(*b.args, keys=b.keys))
    assert rt.root_outputs(1)["scores"] == (PR, [("present", "E"), ("present", "F"), ("present", "G")])
    assert [(f.key.path, f.kind) for f in rt.failures] == [((0, 0), "group")]


def test_group_failure_leaves_finished_siblings_and_other_calls():
    p = Program("t")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    c = p.expand(p.input("items"), "chunk")
    a = p.call(Call("a", lambda xs: [GroupFailure() if x == 2 else x for x in xs], batch_size=1), c, out="a")
    b = p.call(Call("b", lambda xs: [x * 10 for x in xs], batch_size=1), c, out="b")
    p.output("a", p.reduce(a, "doc", on_child_failure="drop_child"))
    p.output("b", p.reduce(b, "doc"))
    res = run_local(p.compile(), [{"items": [1, 2, 3]}])
    assert res.values("a") == [[1]]  # 1 finished before 2 failed; 3 was suppressed
    assert res.values("b") == [[10, 20, 30]]  # another call of the same children goes on


def test_stale_and_duplicate_reports_are_rejected():
    calls = []

    def flaky(xs):
        calls.append(list(xs))
        if len(calls) == 1:
            raise RuntimeError("transient")
        return double(xs)

    rt = LineageRuntime(chunk_program(batch_size=4, recovery=Recovery("fail", retries=1), fn=flaky))
    rt.add_root({"items": [1, 2]})
    b1 = rt.next_batch("s")
    rt.report_error(b1, RuntimeError("transient"))
    assert rt.report(b1, [0, 0]) == 0  # the old attempt: items are requeued
    b2 = rt.next_batch("s")
    assert b2.keys == b1.keys and b2.gens == (2, 2)
    assert rt.report(b1, [0, 0]) == 0  # stale generation
    assert rt.report(b2, [2, 4]) == 2
    assert rt.report(b2, [9, 9]) == 0  # duplicate
    assert rt.root_outputs(0) == {"scores": (PR, [2, 4])}
    assert rt.counters["s"].rejected == 6


def failing_on(bad):
    def fn(xs):
        if bad in xs:
            raise ValueError(f"cannot score {bad}")
        return double(xs)
    return fn


def test_split_recovery_isolates_the_failing_sample():
    res = run_local(chunk_program(batch_size=8, recovery=Recovery("split"), fn=failing_on(5),
                                  on_child_failure="drop_child"), [{"items": list(range(8))}])
    assert res.values("scores") == [[0, 2, 4, 6, 8, 12, 14]]
    assert [(f.key.path, f.kind, f.reason) for f in res.failures] == [((0, 5), "error", "ValueError: cannot score 5")]
    assert res.counters["s"].batches == 7  # 8, 4+4, 2+2, 1+1


def test_fail_recovery_fails_the_batch_and_retry_recovers_a_transient_error():
    res = run_local(chunk_program(batch_size=4, recovery=Recovery("fail"), fn=failing_on(5),
                                  on_child_failure="drop_child"), [{"items": list(range(8))}])
    assert res.values("scores") == [[0, 2, 4, 6]]
    state = {"n": 0}

    def transient(xs):
        state["n"] += 1
        if state["n"] <= 2:
            raise OSError("busy")
        return double(xs)

    res = run_local(chunk_program(batch_size=4, recovery=Recovery("abort", retries=2), fn=transient),
                    [{"items": [1, 2, 3]}])
    assert res.values("scores") == [[2, 4, 6]]


def test_abort_names_the_call_and_items():
    with pytest.raises(LineageAbort, match=r"call 'score' raised ValueError: cannot score 1 on a batch of 1 item\(s\) "
                                           r"\(chunk\[0, 1\]\); its recovery policy is 'abort'"):
        run_local(chunk_program(batch_size=4, recovery=Recovery("abort"), fn=failing_on(1)), [{"items": [0, 1, 2]}])


def test_wrong_number_of_outputs_is_an_error_for_recovery():
    res = run_local(chunk_program(batch_size=2, recovery=Recovery("fail"), fn=lambda xs: [1]),
                    [{"items": [0, 1]}])
    assert res.outcomes("scores") == [FA] and res.values("scores") == [None]  # its children failed
    assert res.failures[0].reason == "ValueError: call 'score' returned 1 outputs for 2 inputs"


def test_deadlock_detector_reports_progress_counters():
    rt = LineageRuntime(chunk_program(batch_size=2))
    rt.add_root({"items": [1, 2, 3]})
    rt.next_batch("s")  # a batch that its executor loses
    b = rt.next_batch("s")
    rt.report(b, double(*b.args))
    rt.check_progress(in_flight=1)  # fine while the executor still waits for it
    with pytest.raises(LineageDeadlock) as e:
        rt.check_progress(in_flight=0)
    msg = str(e.value)
    assert "no progress" in msg
    assert "call score (s): {'in_flight': 2, 'present': 1, 'batches': 2, 'rejected_reports': 0, 'errors': 0}" in msg
    assert "roots: {'admitted': 1, 'completed': 0, 'reduces_waiting': 1, 'broadcasts_waiting': 0}" in msg


def test_bounded_admission_and_completion_callback():
    seen = []
    res = run_local(chunk_program(batch_size=2), ({"items": [i] * (i % 3)} for i in range(6)), max_active_roots=2,
                    on_complete=lambda i, out: seen.append(i))
    assert sorted(seen) == list(range(6))
    assert res.values("scores") == [[], [2], [4, 4], [], [8], [10, 10]]


def test_missing_input_is_a_clear_error():
    rt = LineageRuntime(chunk_program())
    with pytest.raises(KeyError, match=r"root 0 lacks input\(s\) \['items'\]"):
        rt.add_root({"item": []})
