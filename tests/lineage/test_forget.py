"""Forget mode: a root's state is dropped once it is handed over, so a long input runs in memory
bounded by the roots alive at once (``peak_live_roots``), with the same outputs."""
import pytest

from data_juicer.lineage import Call, Outcome, Program, RecordFailure
from data_juicer.lineage.local import iter_local
from data_juicer.lineage.runtime import LineageRuntime


def program(batch_size=4):
    p = Program("f")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    c = p.expand(p.input("items"), "chunk")
    s = p.call(Call("score", lambda xs: [RecordFailure("bad") if x == 13 else x * 2 for x in xs],
                    batch_size=batch_size), c)
    kept = p.filter(s, where=lambda v: v % 3 != 0)
    p.output("scores", p.reduce(kept, "doc"))
    return p.compile()


def roots(n):
    # doc i has i % 5 children i, i+2, ...: the value 13 fails (doc 9's child 2, doc 13's child 0)
    return ({"items": [i + j * 2 for j in range(i % 5)]} for i in range(n))


def outputs(stream):
    return sorted((f.index, f.outcome, f.values["scores"], tuple(r.reason for r in f.records)) for f in stream)


@pytest.mark.parametrize("order", ["completion", "input"])
def test_forgetting_runs_keep_a_bounded_number_of_roots_with_the_same_outputs(order):
    plain = outputs(iter_local(program(), roots(600), order=order))
    stream = iter_local(program(), roots(600), order=order, window=16, max_active_roots=16, forget=True)
    got = outputs(stream)
    rt = stream.runtime
    assert [(i, o, v) for i, o, v, _ in got] == [(i, o, v) for i, o, v, _ in plain]
    assert len(got) == 600
    assert rt.peak_live_roots == 16 and rt.live_roots == 0 and rt.released == 600
    # nothing of any root is left: values, items, children, failure records, the completion log
    assert not rt.values and not rt.items and not rt._children and not rt._first_failure
    assert not rt._root_records and not rt.failures and len(rt.completed.items) == 0
    assert len(rt.roots) == 600 and len(rt.completed) == 600
    # the failing child is reported with its root, in Finished.records
    assert [(i, o, r) for i, o, _, r in got if r] == [
        (9, Outcome.FAILED, ("bad", "child chunk[9, 2] failed (bad)")),
        (13, Outcome.FAILED, ("bad", "child chunk[13, 0] failed (bad)"))]
    assert stream.result.outputs == [] and stream.result.extra["peak_live_roots"] == 16


def test_without_forget_every_root_stays():
    stream = iter_local(program(), roots(100), max_active_roots=16)
    list(stream)
    assert stream.runtime.peak_live_roots == 100 and stream.runtime.live_roots == 100
    assert len(stream.result.outputs) == 100


def test_release_refuses_an_unfinished_root_and_trimmed_entries_say_so():
    rt = LineageRuntime(program(), forget=True)
    rt.add_root({"items": [1, 2]})
    with pytest.raises(RuntimeError, match="root 0 is not complete"):
        rt.release(0)
    rt.add_root({"items": []})  # no children: complete at once
    assert list(rt.completed) == [1]
    rt.release(1)
    rt.trim_completed(1)
    with pytest.raises(IndexError, match="entry 0 was trimmed"):
        rt.completed[0]
    assert rt.live_roots == 1 and rt.is_complete(1)
