import pytest

from data_juicer.core.dataset import DJDataset

# (score, s, meta.q, meta.lang, meta.n, meta.lst, meta.i) of samples t0..t9
_TABLE = [
    (3, "b", 0.5, "en", "3", [1, 2], 1),
    (1, "a", None, "zh", "x", [], 2),
    (3, "10", 2.0, "en", "1e1", [5], 1),
    (7, "9", 0.5, None, None, [0, 1, 2], 3),
    (-2, "b", -1.0, "fr", "-4", [2, 2], 2),
    (3, "", 0.5, "zh", "3", [9], 1),
    (0, "B", 7.5, "en", "inf", [1], 4),
    (1, "a", None, None, " 2 ", [3, 4], 2),
    (5, "c", 3.25, "de", "nope", [], 5),
    (3, "b", 2.0, "en", "2", [1, 1], 1),
]


@pytest.fixture
def sel_dataset():
    """Ten samples with ties, nulls, numeric strings and lists in top-level and nested fields."""
    return DJDataset.from_rows([
        {"text": f"t{i}", "score": score, "s": s, "meta": {"q": q, "lang": lang, "n": n, "lst": lst, "i": k}}
        for i, (score, s, q, lang, n, lst, k) in enumerate(_TABLE)
    ])


@pytest.fixture
def float_dataset():
    """Floats with signed zeros, NaNs and inf, top-level (f) and nested (m.f, m.s as strings)."""
    nan = float("nan")
    pairs = [(0.0, "1"), (-0.0, "nan"), (nan, "2"), (1.5, "-1"), (nan, "x"), (1.5, "nan"), (-0.0, "3"),
             (float("inf"), "inf")]
    return DJDataset.from_rows([{"text": f"t{i}", "f": f, "m": {"f": f, "s": s}} for i, (f, s) in enumerate(pairs)])


@pytest.fixture
def ids():
    """Sample numbers (t3 -> 3) of a dataset, in order."""
    return lambda ds: [int(t[1:]) for t in ds.column("text")]
