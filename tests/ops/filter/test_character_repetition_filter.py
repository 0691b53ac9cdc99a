import pytest
from text_filter_data import TEXTS

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

KEY = "char_rep_ratio"


def make(**kw):
    return OPERATORS.get("character_repetition_filter")(**kw)


def stats_and_keep(op, texts=TEXTS):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    op.compute_stats_batched(samples)
    return [s[KEY] for s in samples[Fields.stats]], [bool(k) for k in op.process_batched(samples)]


# values from Data-Juicer 1.6.1
CASES = [
    ({}, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.994750656167979, 0.1797752808988764, 0.3333333333333333, 0.0, 0.0, 0.0,
          0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1520912547528517, 0.24193548387096775, 0.21875, 0.0, 0.0],
     [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
    ({"rep_len": 1, "min_ratio": 0.1, "max_ratio": 0.4},
     [0.0, 0.0, 0.5675675675675675, 0.43636363636363634, 0.3548387096774194, 0.4444444444444444,
      0.9977101733725875, 0.6086956521739131, 0.3333333333333333, 0.4318181818181818, 1.0, 0.75,
      0.37142857142857144, 0.3333333333333333, 0.2916666666666667, 0.3709677419354839, 0.4166666666666667, 0.44,
      0.5, 0.4264705882352941, 0.6056338028169014, 0.6027397260273972, 0.49122807017543857, 0.41818181818181815],
     [0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
    ({"rep_len": 3, "max_ratio": 0.3},
     [0.0, 0.0, 0.14285714285714285, 0.0, 0.06896551724137931, 0.0, 0.9970540098199673, 0.3905109489051095, 0.35,
      0.2619047619047619, 0.0, 0.0, 0.0, 0.0, 0.0, 0.03333333333333333, 0.45454545454545453, 0.08695652173913043,
      0.3125, 0.2037037037037037, 0.34782608695652173, 0.19718309859154928, 0.07272727272727272,
      0.22641509433962265],
     [1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 1, 1]),
]


@pytest.mark.parametrize("kw,expected,keep", CASES)
def test_matches_data_juicer(kw, expected, keep):
    stats, kept = stats_and_keep(make(**kw))
    assert stats == expected and all(type(v) is float for v in stats)
    assert kept == [bool(k) for k in keep]
    out = run_ops_on_rows([make(**kw)], [{"text": t} for t in TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(TEXTS, keep) if k]


def test_ratio_counts_the_sqrt_most_frequent_repeated_ngrams():
    # 2-grams of "aaaab": aa x3, ab x1 -> 2 distinct, isqrt(2)=1 repeated kept -> 3/4
    # "abcd": all 2-grams unique -> 0.0; shorter than rep_len -> 0.0
    stats, _ = stats_and_keep(make(rep_len=2), ["aaaab", "abcd", "a", "😀😀😀"])
    assert stats == [0.75, 0.0, 0.0, 1.0]


def test_rejects_bad_rep_len():
    with pytest.raises(ValueError, match="rep_len"):
        make(rep_len=0)


def test_numpy_ratio_equals_counter_ratio():
    import random

    from data_juicer.ops.filter.character_repetition_filter import char_rep_ratio, char_rep_ratio_fast

    rng = random.Random(11)
    pieces = ["abc", "abcabc", " ", "\n", "中文", "😀", "the same line\n", "x" * 30, "zq", "ü"]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 120)))
        for n in (1, 2, 5, 10, 17):
            assert char_rep_ratio_fast(text, n) == char_rep_ratio(text, n)


def test_compiled_batch_ratios_equal_the_python_ones():
    """The numba kernel (one call per batch) gives char_rep_ratio's values: texts of every length
    around the 64-n-gram switch, repeated runs, emoji and a lone surrogate."""
    import random

    from data_juicer.ops.common import repetition_numba
    from data_juicer.ops.filter.character_repetition_filter import char_rep_ratio, char_rep_ratio_fast

    if not repetition_numba.available():
        pytest.skip("numba is not installed: the compiled path is not used")
    rng = random.Random(2)
    alphabet = "ab c\n😀é\ud800"
    texts = ["".join(rng.choice(alphabet[:rng.randint(1, len(alphabet))]) for _ in range(rng.randint(0, 300)))
             for _ in range(300)] + ["abcdefghij" * 20, "x" * 100, ""]
    for n in (1, 3, 10):
        got = repetition_numba.char_rep_ratios(texts, n).tolist()
        assert got == [char_rep_ratio(t, n) for t in texts]
        assert got == [char_rep_ratio_fast(t, n) for t in texts]
    assert repetition_numba.char_rep_ratios(["abcdefghij" * 20], 10).tolist() == [58 / 191]  # 10 distinct 10-grams; the isqrt(10) = 3 most frequent: 20 + 19 + 19
