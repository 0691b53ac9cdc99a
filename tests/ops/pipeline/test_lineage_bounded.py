"""FanOutStage over a lazily read input: at most ``window`` samples alive, the ledger written per
burst in sample order with ``order='input'`` (nothing held until the end), once at the end otherwise."""
from data_juicer.ops.pipeline._lineage_fanout import FanOutStage


def _rows(n):
    for i in range(n):
        yield {"id": i, "text": 5 if i % 10 == 3 else f"alpha beta {i}\n\ngamma\n\ndelta epsilon"}


def test_input_order_writes_the_ledger_per_burst_in_sample_order():
    calls = []
    stage = FanOutStage("paragraphs", [{"words_num_filter": {"min_num": 2}}])
    out = [b for b in stage.iter_bursts(_rows(100), ledger=calls.append, order="input", window=8)]
    idx = [i for burst in out for i, _ in burst]
    assert idx == list(range(100))
    assert stage.report.peak_live_roots == 8 and stage.report.parents_in == 100
    ids = [e["sample"]["id"] for call in calls for e in call]
    assert ids == [3, 13, 23, 33, 43, 53, 63, 73, 83, 93]
    assert len(calls) > 1  # written as the bursts go
    assert calls[0][0]["message"] == "field 'text' is int, not text"
    kept = [r for burst in out for _, rows in burst for r in rows]
    assert len(kept) == 90 and kept[0]["children"] == ["alpha beta 0", "delta epsilon"]


def test_completion_order_writes_the_ledger_once_at_the_end():
    calls = []
    stage = FanOutStage("paragraphs", [{"words_num_filter": {"min_num": 2}}])
    rows = [r for burst in stage.iter_bursts(_rows(50), ledger=calls.append, window=16) for r in burst]
    assert len(rows) == 50 and len(calls) == 1
    assert [e["sample"]["id"] for e in calls[0]] == [3, 13, 23, 33, 43]
    assert stage.report.peak_live_roots <= 16
