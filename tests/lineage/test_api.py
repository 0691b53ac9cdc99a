"""The API as a user reads it: counters and metrics by call name, per-replica setup, describe()."""
import pytest

from data_juicer.lineage import Call, Program, run_local


class Embedder:
    built = []

    def __init__(self, dim, scale=1):
        self.dim, self.scale = dim, scale
        Embedder.built.append((dim, scale))

    def __call__(self, xs):
        return [[x * self.scale] * self.dim for x in xs]


def program(call):
    p = Program("api")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    parts = p.call(Call("expand", lambda ts: [t.split() for t in ts], batch_size=2), p.input("text"), out="parts")
    v = p.call(call, p.expand(parts, "chunk"))
    p.output("v", p.reduce(v, "doc"))
    return p.compile()


def test_counters_and_metrics_are_keyed_by_call_name_and_ports_still_work():
    res = run_local(program(Call("embed", Embedder, batch_size=3).setup(2)), [{"text": "a b c"}, {"text": "d"}])
    assert res.counters["expand"].batches == 1  # the call's name, whatever its port is called
    assert res.counters["parts"] is res.counters["expand"]  # the port works too
    assert set(res.counters) == {"expand", "embed"} and "parts" in res.counters
    assert res.metrics["embed"] == {"batches": 2, "items": 4, "mean_fill": round(4 / 6, 4), "parents_in_batches": 2,
                                    "errors": 0, "rejected_reports": 0, "never_dispatched": 0, "doomed": 0,
                                    "withdrawn": 0, "skipped": 0, "computed": 4}
    with pytest.raises(KeyError, match=r"no call named 'embd'; the calls are \['embed', 'expand'\]"):
        res.counters["embd"]


def test_two_calls_with_one_name_are_both_kept():
    p = Program("dup")
    p.domain("doc")
    a = p.call(Call("f", lambda xs: [x + 1 for x in xs]), p.input("x"), out="a")
    b = p.call(Call("f", lambda xs: [x * 2 for x in xs], batch_size=1), a, out="b")
    p.output("y", b)
    res = run_local(p.compile(), [{"x": 1}, {"x": 2}])
    assert res.values("y") == [4, 6]
    assert sorted(res.counters) == ["f", "f (b)"]
    assert (res.counters["a"].batches, res.counters["b"].batches) == (1, 2)


def test_setup_records_constructor_arguments_and_builds_once_per_run():
    Embedder.built.clear()
    call = Call("embed", Embedder, batch_size=1).setup(3, scale=10)
    assert (call.init_args, call.init_kwargs) == ((3,), (("scale", 10),))
    assert Embedder.built == []  # declaring builds nothing
    res = run_local(program(call), [{"text": "x y"}])
    assert res.values("v") == [[["x" * 10] * 3, ["y" * 10] * 3]]
    assert Embedder.built == [(3, 10)]  # one replica, built once for its 2 batches
    assert "setup Embedder(3, scale=10)" in program(call).describe()


def test_setup_needs_a_class():
    with pytest.raises(ValueError, match=r"call 'f': setup\(\.\.\.\) arguments need fn to be a class"):
        Call("f", lambda xs: xs).setup(1)


def test_describe_lists_pools_with_resolved_resources():
    text = program(Call("embed", Embedder, batch_size=64, replicas=2, num_gpus=0.5).setup(8)).describe(
        {"CPU": 4, "GPU": 1})
    assert text.splitlines()[-3:] == [
        "  pools (one per call, alive for the whole run; on 4 CPUs, 0 GPUs):".replace("0 GPUs", "1 GPUs"),
        "    expand  1 x (1 CPU, 0 GPU)  batch 2 (any parent)",
        "    embed   2 x (1 CPU, 0.5 GPU)  batch 64 (any parent)  setup Embedder(8)"]


def test_an_inline_call_has_no_pool_and_takes_no_cpu_share():
    plan = program(Call("embed", Embedder, batch_size=8, replicas=2).setup(1))
    p = Program("inl")
    p.domain("doc")
    a = p.call(Call("cheap", lambda xs: xs, inline=True, num_cpus=8), p.input("x"))
    p.output("y", p.call(Call("model", lambda xs: xs, replicas=2), a))
    plan = p.compile()
    assert plan.pool_cpus({"CPU": 2}) == {"model_1": 1.0}
    text = plan.describe({"CPU": 2})
    assert "call cheap(x) -> cheap_0   [batch 64, any parent, on_error=split, inline (driver)]" in text
    assert text.splitlines()[-2:] == ["    cheap  inline in the driver  batch 64 (any parent)",
                                      "    model  2 x (1 CPU, 0 GPU)  batch 64 (any parent)"]
