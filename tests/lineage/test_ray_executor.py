"""The Ray executor on a local Ray (2 CPUs): same outputs as the local run, failures contained."""
import pytest

from data_juicer.lineage import Call, GroupFailure, Outcome, Program, RecordFailure, Recovery, run_local

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_ray():
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()


def program(batch_size, replicas, policy="any", on_child_failure="fail_parent", inline=False):
    def split(texts):
        return [t.split() for t in texts]

    def score(words, keys):
        out = []
        for w, k in zip(words, keys):
            if w == "poison":
                out.append(GroupFailure("poisoned chunk"))
            elif w == "boom":
                raise ValueError("boom")
            else:
                out.append(len(w) * 10 + k.ordinal)
        return out

    p = Program("ray")
    p.domain("doc")
    p.domain("word", parent="doc")
    parts = p.call(Call("split", split, batch_size=4, num_cpus=0.25, inline=inline), p.input("text"))
    w = p.expand(parts, "word")
    s = p.call(Call("score", score, batch_size=batch_size, policy=policy, replicas=replicas, num_cpus=0.25,
                    pass_keys=True, recovery=Recovery("split")), w)
    p.output("scores", p.reduce(s, "doc", on_child_failure=on_child_failure))
    return p.compile()


DOCS = [{"text": " ".join(f"w{i}x{'y' * (j % 4)}" for j in range(i % 17))} for i in range(40)]
DOCS[5] = {"text": "a bb poison ccc dddd eeeee"}
DOCS[9] = {"text": "one boom two"}


def test_ray_matches_local_across_batch_sizes_replicas_and_policies(local_ray):
    from data_juicer.lineage.ray_executor import run_ray

    reference = run_local(program(1, 1), DOCS)
    assert reference.outcomes("scores")[9] is Outcome.FAILED  # 'boom' isolated by split, then its parent fails
    assert run_local(program(1, 1, on_child_failure="drop_child"), DOCS).values("scores")[9] == [30, 32]
    for bs, replicas, policy, ib, inline in [(8, 2, "any", 7, False), (3, 3, "single", 50, True)]:
        got = run_ray(program(bs, replicas, policy, inline=inline), DOCS, input_batch_size=ib,
                      max_active_input_batches=2)
        assert got.outputs == reference.outputs
        assert got.outcomes("scores")[5] is Outcome.FAILED  # poisoned: failed, not silently partial
        assert sorted(got.failed) == [5, 9]
        assert [r.kind.value for r in got.failed[5].chain()] == ["child", "group"]
        assert [r.kind.value for r in got.failed[9].chain()] == ["child", "error"]
        assert got.extra["input_batches"] == -(-len(DOCS) // ib)


def test_fan_out_stage_on_ray_matches_local(local_ray):
    from data_juicer.ops.pipeline._lineage_fanout import FanOutStage

    docs = [{"id": i, "text": "\n\n".join(" ".join(["w"] * ((i + j) % 5)) for j in range(i % 4))} for i in range(30)]
    ops = [{"whitespace_normalization_mapper": {"batch_size": 4}},
           {"words_num_filter": {"min_num": 2, "batch_size": 3}}]
    local = FanOutStage("paragraphs", ops).run(docs)
    on_ray = FanOutStage("paragraphs", ops, engine="ray", replicas=2).run(docs, input_batch_size=8)
    assert on_ray == local and len(local) > 10



def slow_program(sleep_s, batch_size=4, replicas=1, on_child_failure="fail_parent", cap=0):
    import time

    def score(xs):
        time.sleep(sleep_s)
        return [GroupFailure("p") if x == "p" else RecordFailure("r") if x == "r" else x * 2 for x in xs]

    p = Program("slow")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    c = p.expand(p.input("items"), "chunk")
    s = p.call(Call("score", score, batch_size=batch_size, replicas=replicas, num_cpus=0.5,
                    max_in_flight_per_parent=cap), c)
    p.output("scores", p.reduce(s, "doc", on_child_failure=on_child_failure))
    return p.compile()


def test_queued_siblings_are_withdrawn_from_the_driver_and_skipped_by_the_replica(local_ray):
    from data_juicer.lineage.ray_executor import run_ray

    # parent 0: 20 children, child 0 poisoned; 3 batches of 4 sent to the one replica at once
    roots = [{"items": ["p"] + list(range(1, 20))}, {"items": [1, 2]}]
    # driver_start off: every batch goes to the one replica, whose worker starts first
    res = run_ray(slow_program(0.3), roots, slots_per_replica=3, fresh_queued=False, driver_start=False)
    assert res.outcomes("scores") == [Outcome.FAILED, Outcome.PRESENT] and res.values("scores")[1] == [2, 4]
    c = res.counters["score"]
    # batch 1 ran (the trigger and 3 siblings); batches 2 and 3 were skipped on the replica (the
    # GroupFailure was seen there first); the 8 children still queued never left the driver. Doomed:
    # the trigger's 3 batch-mates (computed, not committed) and the 8 skipped
    assert (c.items, c.skipped, c.computed, c.never_dispatched, c.doomed) == (14, 8, 6, 8, 11), c
    # a RecordFailure fails the parent on the driver: the withdrawal message reaches batch 3
    roots = [{"items": ["r"] + list(range(1, 20))}, {"items": [1, 2]}]
    res = run_ray(slow_program(1.0), roots, slots_per_replica=3, fresh_queued=False, driver_start=False)
    c = res.counters["score"]
    assert res.outcomes("scores") == [Outcome.FAILED, Outcome.PRESENT]
    assert c.skipped >= 4 and c.computed <= 10 and res.extra["withdrawals_sent"] >= 8, c


def test_by_default_batches_queued_at_a_busy_replica_hold_no_parent_in_flight(local_ray):
    from data_juicer.lineage.ray_executor import run_ray

    roots = [{"items": ["p"] + list(range(1, 20))}, {"items": [1, 2]}]
    res = run_ray(slow_program(0.3), roots, slots_per_replica=3, driver_start=False)
    c = res.counters["score"]
    # parent 0's siblings leave the driver only in batches for an idle replica: one batch here
    assert res.outcomes("scores") == [Outcome.FAILED, Outcome.PRESENT]
    assert (c.items, c.computed, c.skipped) == (6, 6, 0), c


def test_iter_ray_streams_parents_as_they_finish_on_the_callers_clock(local_ray):
    import time

    from data_juicer.lineage.ray_executor import iter_ray, run_ray

    # parent 1 has 24 children (12 batches of 0.2 s); parent 0 has one, in the first batch
    roots = [{"items": [0]}, {"items": list(range(24))}] + [{"items": [i]} for i in range(2, 6)]
    plan = slow_program(0.2, batch_size=2)
    t0 = time.time()
    stream = iter_ray(plan, roots, slots_per_replica=1)
    got = [(f.index, f.outcome, f.at) for f in stream]
    t1 = time.time()
    assert sorted(i for i, _, _ in got) == list(range(6)) and got[0][0] == 0
    ats = [a for _, _, a in got]
    assert ats == sorted(ats) and t0 <= ats[0] <= t1 and ats[0] < t1 - 1.5  # in hand before the big one ran
    assert stream.result.values("scores")[3] == [6]
    # input order, a reorder window of 2: the small parents wait for parent 0
    seen = []
    res = run_ray(plan, roots, order="input", window=2, on_parent=lambda f: seen.append(f.index),
                  clock=lambda: 1000.0)
    assert seen == list(range(6)) and set(res.completed_at) == {1000.0} and res.started_at == 1000.0


class Scaler:
    def __init__(self, factor, offset=0):
        import os

        self.factor, self.offset, self.pid = factor, offset, os.getpid()

    def __call__(self, xs):
        return [(x * self.factor + self.offset, self.pid) for x in xs]


def test_setup_builds_one_instance_per_replica(local_ray):
    from data_juicer.lineage.ray_executor import run_ray

    p = Program("setup")
    p.domain("doc")
    p.output("y", p.call(Call("scale", Scaler, batch_size=2, replicas=2, num_cpus=0.5).setup(3, offset=1),
                         p.input("x")))
    res = run_ray(p.compile(), [{"x": i} for i in range(10)], driver_start=False)
    assert [v for v, _ in res.values("y")] == [3 * i + 1 for i in range(10)]
    assert 1 <= len({pid for _, pid in res.values("y")}) <= 2
    assert res.metrics["scale"]["batches"] == 5


class WherePid:
    def __init__(self, sleep_s):
        self.sleep_s = sleep_s

    def __call__(self, xs):
        import os
        import time

        time.sleep(self.sleep_s)
        return [(x + 1, os.getpid()) for x in xs]


def test_driver_start_runs_first_batches_in_the_driver_until_an_actor_answers(local_ray):
    import os

    from data_juicer.lineage.ray_executor import iter_ray

    p = Program("warm")
    p.domain("doc")
    p.domain("part", parent="doc")
    s = p.call(Call("work", WherePid, batch_size=2, replicas=1, num_cpus=0.5).setup(0.05),
               p.expand(p.input("xs"), "part"))
    p.output("y", p.reduce(s, "doc"))
    plan = p.compile()
    roots = [{"xs": [i, i]} for i in range(120)]  # 120 batches of 0.05 s: the actor starts well before the end
    stream = iter_ray(plan, roots, slots_per_replica=1)
    got = list(stream)
    res = stream.result
    assert [v for v, _ in res.values("y")[7]] == [8, 8]
    pids = [res.values("y")[f.index][0][1] for f in got]
    me = os.getpid()
    # the first parent in hand was computed in the driver, while the actor's worker process started
    assert pids[0] == me and res.extra["driver_batches"] >= 1
    # then the actor took over: the driver takes no batch once it has answered
    assert pids[-1] != me and res.extra["driver_batches"] < 120
    first_actor = next(i for i, q in enumerate(pids) if q != me)
    assert all(q != me for q in pids[first_actor + 2:])  # at most the batch the driver held finishes after
    assert [v for v, _ in sum(res.values("y"), [])] == [i + 1 for i in range(120) for _ in range(2)]
    off = list(iter_ray(plan, roots[:4], driver_start=False))
    assert len(off) == 4 and all(f.values["y"][0][1] != me for f in off)
    # a call can opt out itself (a heavy setup, e.g. a model)
    p2 = Program("heavy")
    p2.domain("doc")
    p2.output("y", p2.call(Call("work", WherePid, batch_size=2, num_cpus=0.5, driver_start=False).setup(0.0),
                           p2.input("x")))
    res = iter_ray(p2.compile(), [{"x": i} for i in range(6)])
    assert all(f.values["y"][1] != me for f in res) and res.result.extra["driver_batches"] == 0
