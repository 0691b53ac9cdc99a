import pytest
from text_filter_data import TEXTS

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields, InterVars

KEY = "avg_line_length"


def make(**kw):
    return OPERATORS.get("average_line_length_filter")(**kw)


def stats_and_keep(op, texts=TEXTS, context=False):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    if context:
        samples[Fields.context] = [{} for _ in texts]
    op.compute_stats_batched(samples, context=context)
    return [s[KEY] for s in samples[Fields.stats]], [bool(k) for k in op.process_batched(samples)], samples


# values from Data-Juicer 1.6.1
AVG = [0.0, 1.0, 37.0, 55.0, 31.0, 36.0, 1019.0, 276.0, 42.0, 5.5, 1.0, 4.0, 35.0, 27.0, 24.0, 31.0, 24.0, 25.0,
       18.0, 136.0, 71.0, 73.0, 19.0, 55.0]
KEEP_DEFAULT = [0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
KEEP_5_40 = [0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0]


@pytest.mark.parametrize("context", [False, True])
@pytest.mark.parametrize("kw,keep", [({}, KEEP_DEFAULT), ({"min_len": 5, "max_len": 40}, KEEP_5_40)])
def test_matches_data_juicer(kw, keep, context):
    stats, kept, _ = stats_and_keep(make(**kw), context=context)
    assert stats == AVG and all(type(v) is float for v in stats)
    assert kept == [bool(k) for k in keep]
    out = run_ops_on_rows([make(**kw)], [{"text": t} for t in TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(TEXTS, keep) if k]


def test_lines_are_shared_through_context():
    key = f"{InterVars.lines}-text"
    _, _, samples = stats_and_keep(make(), ["ab\ncd\r\nef", ""], context=True)
    assert [c[key] for c in samples[Fields.context]] == [["ab", "cd", "ef"], []]
    # lines already in the context (from a fused op) are used as they are
    samples = {"text": ["abcdef"], Fields.stats: [{}], Fields.context: [{key: ["a", "b", "c"]}]}
    make().compute_stats_batched(samples, context=True)
    assert samples[Fields.stats][0][KEY] == 2.0


def test_fused_with_maximum_line_length_filter():
    rows = [{"text": "short\n" + "x" * 30}, {"text": "a\nb\nc\nd"}, {"text": "y" * 12}]
    ops = [make(min_len=5), OPERATORS.get("maximum_line_length_filter")(min_len=20)]
    out = run_ops_on_rows(ops, rows)
    assert [r["text"] for r in out] == [rows[0]["text"]]
    assert out[0][Fields.stats] == {KEY: 18.0, "max_line_length": 30}
    assert Fields.context not in out[0]


def test_reuses_existing_stat():
    rows = [{"text": "a", Fields.stats: {KEY: 50.0}}]
    assert len(run_ops_on_rows([make()], rows)) == 1
