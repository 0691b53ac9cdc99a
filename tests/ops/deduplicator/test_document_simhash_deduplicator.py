import pytest
from dedup_test_data import TEXTS, generated_corpus

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import HashKeys

pytest.importorskip("simhash", reason="document_simhash_deduplicator needs simhash-pybind")

PARAMS = {
    "default": {},
    "character": {"tokenization": "character", "window_size": 3, "num_blocks": 5, "hamming_distance": 3},
    "punctuation": {"tokenization": "punctuation", "window_size": 2, "lowercase": False},
    "ignore_punct": {"window_size": 2, "ignore_pattern": r"\p{P}", "num_blocks": 10, "hamming_distance": 8},
}
# values from Data-Juicer 1.6.1: indices of TEXTS kept
KEPT = {
    "default": [0, 3, 4, 5, 6, 12, 13, 14, 16, 17, 18, 19, 20, 21, 22, 23],
    "character": [0, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 22],
    "punctuation": [0, 5, 9, 10, 11, 13, 16, 17, 20, 21, 22, 23],
    "ignore_punct": [0, 4, 6, 7, 12, 14, 16, 17, 18, 19, 20, 21, 22],
}
# values from Data-Juicer 1.6.1: SimHashes of TEXTS with the default parameters (0: no shingles)
HASHES = ["17210016502456911559", "17210016502456911559", "17210016502456911559", "17173919038811309703",
          "7517476586608134406", "4652906023501179686", "0", "0", "0", "0", "0", "0", "7155456339676515032",
          "7135194848637502424", "658832951821871537", "658832951821871537", "17931522050529563477",
          "1171360533176173120", "14379998525014956362", "14987982472985236180", "17736211631175788869",
          "15365032368308120515", "1211963673783413386", "1211963665195313294"]
# values from Data-Juicer 1.6.1: indices removed from generated_corpus()
GENERATED_REMOVED = {
    "default": [18, 24, 31, 33, 39, 43, 44, 48, 61, 64, 71, 73, 130, 140, 141, 144, 151, 152, 167, 183, 189, 201,
                205, 209, 221, 231, 248, 272, 277, 288],
    "w3": [18, 24, 30, 31, 33, 39, 43, 44, 48, 61, 62, 64, 71, 73, 92, 130, 140, 141, 144, 151, 152, 155, 167, 179,
           183, 189, 209, 218, 221, 231, 248, 262, 272, 277, 288],
}
GENERATED_PARAMS = {"default": {}, "w3": {"window_size": 3, "num_blocks": 8, "hamming_distance": 5}}


def make(**kw):
    return OPERATORS.get("document_simhash_deduplicator")(**kw)


def hashed(op, texts, batch_size=5):
    rows = [{"text": t, "id": i} for i, t in enumerate(texts)]
    return DJDataset.from_rows(rows).map_batches(op.compute_hash, batch_size=batch_size)


@pytest.mark.parametrize("name", list(PARAMS))
def test_matches_data_juicer(name):
    op = make(**PARAMS[name])
    out, pairs = op.process(hashed(op, TEXTS))
    assert out.column("id") == KEPT[name] and pairs == {}


def test_hashes_match_data_juicer_and_stay_in_the_result():
    op = make()
    ds = hashed(op, TEXTS)
    assert ds.column(HashKeys.simhash) == HASHES
    out, _ = op.process(ds)
    assert out.column(HashKeys.simhash) == [HASHES[i] for i in KEPT["default"]]


@pytest.mark.parametrize("name", list(GENERATED_PARAMS))
def test_generated_corpus_matches_data_juicer(name):
    docs = generated_corpus()
    op = make(**GENERATED_PARAMS[name])
    out, _ = op.process(hashed(op, docs, batch_size=64))
    assert sorted(set(range(len(docs))) - set(out.column("id"))) == GENERATED_REMOVED[name]


def test_pairs_for_the_tracer():
    op = make()
    ds = hashed(op, TEXTS)
    _, pairs = op.process(ds, show_num=3)
    # clusters in order of their first duplicate: 1 (of 0), 7 (of 6), 15 (of 14)
    assert {k: [r["id"] for r in v] for k, v in pairs.items()} == {0: [0, 1], 6: [6, 7], 14: [14, 15]}
    single, pairs = op.process(hashed(op, TEXTS[:1]))
    assert single.column("id") == [0] and pairs == {}


def test_existing_hashes_are_reused():
    samples = {"text": ["a b c d e f g"], HashKeys.simhash: ["12"]}
    assert make().compute_hash(samples)[HashKeys.simhash] == ["12"]


def test_bad_parameters_are_clear_errors():
    with pytest.raises(ValueError, match="unknown tokenization 'sentencepiece'"):
        make(tokenization="sentencepiece")
    with pytest.raises(ValueError, match="greater than hamming_distance"):
        make(num_blocks=4, hamming_distance=4)
    with pytest.raises(ValueError, match="at most 64"):
        make(num_blocks=65)


def test_compiled_simhash_equals_the_python_path(monkeypatch):
    """The numba kernel (MD5 per shingle + bit votes) gives simhash-pybind's values exactly."""
    import random

    from data_juicer.ops.common import simhash_numba

    if not simhash_numba.available():
        pytest.skip("numba is not installed: only the Python path runs")
    rng = random.Random(5)
    words = ["the", "a", "Über", "naïve", "中文", "字", "😀", "x" * 300, "", "  ", "end.", "Ünïcödé", "q"]
    texts = ["", "one", "two words", "a  b   c    d e f g h"] + [
        " ".join(rng.choice(words) for _ in range(rng.randint(0, 60))) for _ in range(200)]
    for window in (1, 3, 6):
        op = OPERATORS.get("document_simhash_deduplicator")(tokenization="space", window_size=window, lowercase=True)
        assert op._compiled
        fast = op.compute_hash({"text": list(texts)})[HashKeys.simhash]
        monkeypatch.setattr(op, "_compiled", False)
        slow = op.compute_hash({"text": list(texts)})[HashKeys.simhash]
        assert fast == slow
