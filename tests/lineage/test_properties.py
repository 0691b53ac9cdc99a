"""Outputs do not depend on batch size, batching policy, replicas or the order reports arrive in.

Random programs (1-2 levels of expand, broadcasts, filters, RecordFailures, raising calls with
split recovery) run under random schedules: several batches in flight per call, completed in a
random order, some reports delivered twice. Each must equal a batch-size-1 local run. With the
default ``fail_parent`` reduces, programs with GroupFailure are deterministic too (the parent
fails whichever sibling ran first), and so is the withdrawal of a failed parent's queued and
in-flight siblings: no batch formed after a root finished holds any of its items, and replicas
that skip doomed members (as the Ray actors do) change nothing.
"""
import random

import pytest

from data_juicer.lineage import Call, GroupFailure, LineageRuntime, Program, RecordFailure, Recovery, run_local
from data_juicer.lineage.local import invoke


def children(xs):
    return [[(x * 31 + j * 7) % 97 for j in range(x % 5)] for x in xs]


def bump(xs):
    return [RecordFailure("x%7==3") if x % 7 == 3 else x + 1 for x in xs]


def fragile(xs):
    if any(x % 11 == 5 for x in xs):
        raise ValueError("x%11==5")
    return [x * 3 % 101 for x in xs]


def add(xs, ys):
    return [x + y for x, y in zip(xs, ys)]


def summary(lists):
    return [sum(v if isinstance(v, int) else len(v) for v in vs) % 89 + len(vs) for vs in lists]


def keep(x):
    return x % 3 != 0


def poison(xs):
    return [GroupFailure("x%13==4") if x % 13 == 4 else x for x in xs]


def make_program(seed, batch_size, policy, sizes_seed=0, group=False):
    rng = random.Random(seed)  # the program's shape
    sizes = random.Random(sizes_seed)  # batch sizes: drawn apart so the shape stays the same

    def call(name, fn):
        return Call(name, fn, batch_size=batch_size(sizes) if callable(batch_size) else batch_size,
                    policy=policy, recovery=Recovery("split"))

    p = Program(f"random-{seed}")
    p.domain("d0")
    cur = p.call(call("bump0", bump), p.input("x"))
    stack = []
    depth = rng.choice([1, 2])
    for level in range(1, depth + 1):
        p.domain(f"d{level}", parent=f"d{level - 1}")
        parent = cur
        cur = p.expand(p.call(call(f"split{level}", children), cur), f"d{level}")
        if rng.random() < 0.5:
            cur = p.call(call(f"add{level}", add), cur, p.broadcast(parent, f"d{level}"))
        if group:
            cur = p.call(call(f"poison{level}", poison), cur)
        for i in range(rng.randint(1, 3)):
            kind = rng.choice(["bump", "fragile", "filter", "mask"])
            if kind == "bump":
                cur = p.call(call(f"bump{level}{i}", bump), cur)
            elif kind == "fragile":
                cur = p.call(call(f"fragile{level}{i}", fragile), cur)
            elif kind == "filter":
                cur = p.filter(cur, where=keep)
            else:
                cur = p.filter(cur, p.call(call(f"mask{level}{i}", lambda xs: [x % 4 != 1 for x in xs]), cur))
        stack.append(level)
    for level in reversed(stack):
        outcomes = rng.random() < 0.5 and not group
        cur = p.reduce(cur, f"d{level - 1}", outcomes=outcomes)
        if not outcomes:
            cur = p.call(call(f"sum{level}", summary), cur)
    p.output("y", cur)
    return p.compile()


def run_random_schedule(plan, roots, rng, replicas, skipping=False):
    rt = LineageRuntime(plan)
    pending = list(roots)
    in_flight = []  # (batch, outputs or exception)
    delivered = []
    doomed: set = set()  # what a replica has been told (skipping=True): it drops those members
    while True:
        if pending and rng.random() < 0.3:
            rt.add_root(pending.pop(0))
            continue
        ready = [c for c in rt.ready_calls() if sum(b.call == c for b, _ in in_flight) < replicas]
        if ready and (not in_flight or rng.random() < 0.5):
            batch = rt.next_batch(rng.choice(ready))
            if batch is not None:
                done = set(rt.completed)
                assert not [k for k in batch.keys if k.path[0] in done], "a finished root's item was dispatched"
                in_flight.append((batch, None))  # computed when it is reported, as a replica would
            continue
        if in_flight:
            batch, _ = in_flight.pop(rng.randrange(len(in_flight)))
            skipped = tuple(i for i, k in enumerate(batch.keys) if (batch.call, k) in doomed) if skipping else ()
            run = rt._sub_batch(batch, rt._others(batch, skipped)) if skipped else batch
            try:
                out = invoke(rt.call_nodes[batch.call].call, run) if len(run) else []
            except Exception as e:
                out = e
            (rt.report_error if isinstance(out, Exception) else rt.report)(batch, out, skipped=skipped)
            doomed.update(rt.take_doomed())
            if not skipped:
                delivered.append((batch, out))
            if rng.random() < 0.2 and not skipping:  # a duplicate of an earlier report: must change nothing
                b, o = rng.choice(delivered)
                assert (rt.report_error(b, o) if isinstance(o, Exception) else rt.report(b, o)) == 0
            continue
        if pending:
            rt.add_root(pending.pop(0))
            continue
        rt.check_progress(in_flight=0)
        if rt.done:
            return [rt.root_outputs(i) for i in range(len(rt.roots))]


@pytest.mark.parametrize("seed", range(40))
def test_outputs_do_not_depend_on_batching_or_schedule(seed):
    rng = random.Random(1000 + seed)
    roots = [{"x": rng.randrange(100)} for _ in range(rng.randint(1, 12))]
    reference = run_local(make_program(seed, 1, "any"), roots).outputs
    for trial in range(3):
        policy = rng.choice(["any", "single"])
        plan = make_program(seed, lambda r: r.randint(1, 9), policy, sizes_seed=rng.randrange(10**6))
        got = run_random_schedule(plan, roots, rng, replicas=rng.randint(1, 4))
        assert got == reference, f"seed {seed} trial {trial} policy {policy}"
    assert run_local(make_program(seed, 7, "single"), roots, max_active_roots=2).outputs == reference


@pytest.mark.parametrize("seed", range(30))
def test_group_failures_under_fail_parent_and_withdrawal_do_not_depend_on_schedule(seed):
    rng = random.Random(5000 + seed)
    roots = [{"x": rng.randrange(100)} for _ in range(rng.randint(1, 12))]
    reference = run_local(make_program(seed, 1, "any", group=True), roots).outputs
    for trial in range(3):
        policy = rng.choice(["any", "single"])
        plan = make_program(seed, lambda r: r.randint(1, 9), policy, sizes_seed=rng.randrange(10**6), group=True)
        got = run_random_schedule(plan, roots, rng, replicas=rng.randint(1, 4), skipping=trial > 0)
        assert got == reference, f"seed {seed} trial {trial} policy {policy}"
