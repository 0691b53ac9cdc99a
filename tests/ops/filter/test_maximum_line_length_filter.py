import pytest
from text_filter_data import TEXTS

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields, InterVars

KEY = "max_line_length"


def make(**kw):
    return OPERATORS.get("maximum_line_length_filter")(**kw)


def stats_and_keep(op, texts=TEXTS, context=False):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    if context:
        samples[Fields.context] = [{} for _ in texts]
    op.compute_stats_batched(samples, context=context)
    return [s[KEY] for s in samples[Fields.stats]], [bool(k) for k in op.process_batched(samples)], samples


# values from Data-Juicer 1.6.1
MAX = [0, 1, 37, 55, 31, 36, 3000, 276, 42, 9, 0, 6, 35, 27, 24, 36, 24, 25, 18, 245, 71, 73, 47, 55]
KEEP_DEFAULT = [0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
KEEP_5_60 = [0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1]


@pytest.mark.parametrize("context", [False, True])
@pytest.mark.parametrize("kw,keep", [({}, KEEP_DEFAULT), ({"min_len": 5, "max_len": 60}, KEEP_5_60)])
def test_matches_data_juicer(kw, keep, context):
    stats, kept, _ = stats_and_keep(make(**kw), context=context)
    assert stats == MAX and all(type(v) is int for v in stats)
    assert kept == [bool(k) for k in keep]
    out = run_ops_on_rows([make(**kw)], [{"text": t} for t in TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(TEXTS, keep) if k]


def test_lines_are_shared_through_context():
    key = f"{InterVars.lines}-text"
    _, _, samples = stats_and_keep(make(), ["ab\ncde\u2028f"], context=True)
    assert samples[Fields.context][0][key] == ["ab", "cde", "f"]
    samples = {"text": ["abcdef"], Fields.stats: [{}], Fields.context: [{key: ["a", "bcd"]}]}
    make().compute_stats_batched(samples, context=True)
    assert samples[Fields.stats][0][KEY] == 3


def test_very_long_line_and_interval_options():
    rows = [{"text": "z" * 100_000 + "\nok"}, {"text": "exactly ten"[:10]}]
    assert [len(r["text"]) for r in run_ops_on_rows([make(max_len=10)], rows)] == [10]
    assert [len(r["text"]) for r in run_ops_on_rows([make(max_len=10, max_closed_interval=False)], rows)] == []
    # reversed: keep what is outside the range (boundary values avoided: see base Filter)
    rows.append({"text": "a" * 12})
    assert [len(r["text"]) for r in run_ops_on_rows([make(min_len=11, max_len=20, reversed_range=True)], rows)] == \
        [100_003, 10]
