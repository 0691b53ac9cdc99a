"""Sizing of the Ray executor's actor pools (pure: runs without Ray)."""
import pytest

from data_juicer.lineage import Call, Program


def test_plan_cpus_shares_what_is_left_and_refuses_what_cannot_fit():
    from data_juicer.lineage.ray_executor import plan_cpus

    def plan(*calls):
        p = Program("r")
        p.domain("d")
        port = p.input("x")
        for c in calls:
            port = p.call(c, port)
        p.output("o", port)
        return p.compile()

    def f(xs):
        return xs

    pl = plan(Call("a", f, num_cpus=1, replicas=1), Call("b", f, replicas=2), Call("c", f, replicas=2))
    assert sorted(plan_cpus(pl, {"CPU": 2.0}).values()) == [0.25, 0.25, 1]
    assert sorted(plan_cpus(pl, {"CPU": 16.0}).values()) == [1, 1.0, 1.0]
    with pytest.raises(ValueError, match=r"more than the Ray cluster has \(2 CPUs, 0 GPUs\): a 1x\(3 CPU, 0 GPU\)"):
        plan_cpus(plan(Call("a", f, num_cpus=3)), {"CPU": 2.0})
    with pytest.raises(ValueError, match=r"b 1x\(auto CPU, 1 GPU\)"):
        plan_cpus(plan(Call("b", f, num_gpus=1)), {"CPU": 2.0})
