"""The Ray executor on a local Ray (2 CPUs): same outputs as the local run, failures contained."""
import pytest

from data_juicer.lineage import Call, GroupFailure, Outcome, Program, Recovery, run_local

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


def program(batch_size, replicas, policy="any"):
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
    parts = p.call(Call("split", split, batch_size=4, num_cpus=0.25), p.input("text"))
    w = p.expand(parts, "word")
    s = p.call(Call("score", score, batch_size=batch_size, policy=policy, replicas=replicas, num_cpus=0.25,
                    pass_keys=True, recovery=Recovery("split")), w)
    p.output("scores", p.reduce(s, "doc"))
    return p.compile()


DOCS = [{"text": " ".join(f"w{i}x{'y' * (j % 4)}" for j in range(i % 17))} for i in range(40)]
DOCS[5] = {"text": "a bb poison ccc dddd eeeee"}
DOCS[9] = {"text": "one boom two"}


def test_ray_matches_local_across_batch_sizes_replicas_and_policies(local_ray):
    from data_juicer.lineage.ray_executor import run_ray

    reference = run_local(program(1, 1), DOCS)
    assert reference.values("scores")[9] == [30, 32]  # 'boom' isolated by split recovery
    for bs, replicas, policy, ib in [(8, 2, "any", 7), (3, 3, "single", 50)]:
        got = run_ray(program(bs, replicas, policy), DOCS, input_batch_size=ib, max_active_input_batches=2)
        assert got.outputs[:5] + got.outputs[6:] == reference.outputs[:5] + reference.outputs[6:]
        assert got.outcomes("scores")[5] is Outcome.PRESENT
        # the poisoned document keeps, in order, only the children committed before the trigger
        kept = got.values("scores")[5]
        assert kept == [v for v in [10, 21, 33, 44, 55] if v in kept]
        assert got.extra["input_batches"] == -(-len(DOCS) // ib)
        assert [f.kind for f in got.failures] == ["group", "error"] or \
            sorted(f.kind for f in got.failures) == ["error", "group"]


def test_fan_out_stage_on_ray_matches_local(local_ray):
    from data_juicer.ops.pipeline._lineage_fanout import FanOutStage

    docs = [{"id": i, "text": "\n\n".join(" ".join(["w"] * ((i + j) % 5)) for j in range(i % 4))} for i in range(30)]
    ops = [{"whitespace_normalization_mapper": {"batch_size": 4}},
           {"words_num_filter": {"min_num": 2, "batch_size": 3}}]
    local = FanOutStage("paragraphs", ops).run(docs)
    on_ray = FanOutStage("paragraphs", ops, engine="ray", replicas=2).run(docs, input_batch_size=8)
    assert on_ray == local and len(local) > 10

