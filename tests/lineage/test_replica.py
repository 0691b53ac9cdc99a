"""A replica drops the members of a batch it knows are doomed before calling the function
(pure: the same class the Ray actor runs)."""
from data_juicer.lineage import Call, EntityKey, GroupFailure, RecordFailure
from data_juicer.lineage.ray_executor import Replica

SEEN = []


def fn(xs):
    SEEN.append(list(xs))
    return [GroupFailure("p") if x == "p" else RecordFailure("r") if x == "r" else x * 2 for x in xs]


def keys(*paths):
    return [EntityKey("chunk", p) for p in paths]


def test_replica_skips_withdrawn_keys_and_siblings_of_its_own_group_failure():
    SEEN.clear()
    rep = Replica(Call("score", fn))
    assert rep.run(([1, "p"],), keys((0, 0), (1, 0))) == (True, [2, GroupFailure("p")], ())
    # parent (1,) returned GroupFailure here: its other items are skipped; a RecordFailure does not do that
    ok, out, skipped = rep.run(([3, 4, "r", 5],), keys((0, 1), (1, 1), (2, 0), (1, 2)))
    assert (ok, out, skipped) == (True, [6, RecordFailure("r")], (1, 3))
    assert SEEN[-1] == [3, "r"]
    assert rep.withdraw(keys((0, 2), (2, 1))) == 2
    assert rep.run(([7, 8, 9],), keys((0, 2), (0, 3), (2, 1))) == (True, [16], (0, 2))
    assert rep.skip == set()  # a withdrawn key is forgotten once skipped
    assert rep.run(([1],), keys((1, 5))) == (True, [], (0,))  # all skipped: the function is not called
    assert SEEN[-1] == [8]


def test_replica_reports_an_error_with_what_it_skipped():
    def boom(xs):
        raise ValueError("no")

    rep = Replica(Call("b", boom))
    rep.withdraw(keys((0, 0)))
    ok, err, skipped = rep.run(([1, 2],), keys((0, 0), (0, 1)))
    assert not ok and isinstance(err, ValueError) and skipped == (0,)
