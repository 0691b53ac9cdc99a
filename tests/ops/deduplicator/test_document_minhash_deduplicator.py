import numpy as np
import pytest
from dedup_test_data import TEXTS, generated_corpus, train_sentencepiece

from data_juicer.core.dataset import DJDataset
from data_juicer.models.loader import MODELS_DIR_ENV
from data_juicer.ops import OPERATORS
from data_juicer.ops.common.minhash import optimal_lsh_params
from data_juicer.utils.constant import HashKeys
from data_juicer.utils.lazy import is_available

PARAMS = {
    "default": {},
    "character": {"tokenization": "character", "window_size": 3},
    "punctuation": {"tokenization": "punctuation", "window_size": 2, "lowercase": False, "ignore_pattern": r"\d"},
    "small_bands": {"window_size": 2, "num_permutations": 32, "num_bands": 8, "num_rows_per_band": 4},
    "partial_band": {"window_size": 3, "num_permutations": 18, "num_bands": 5, "num_rows_per_band": 4},
    "empty_band": {"num_permutations": 8, "num_bands": 3, "num_rows_per_band": 4},
    "low_threshold": {"window_size": 3, "num_permutations": 64, "jaccard_threshold": 0.3},
}
# values from Data-Juicer 1.6.1: indices of TEXTS kept, and (bands, rows per band)
KEPT = {
    "default": [0, 3, 4, 6, 12, 14, 16, 17, 18, 19, 20, 21, 22],
    "character": [0, 4, 6, 7, 8, 9, 11, 12, 14, 16, 18, 19, 20, 22],
    "punctuation": [0, 5, 9, 10, 11, 13, 16, 17, 20, 21, 22],
    "small_bands": [0, 4, 6, 7, 12, 14, 16, 17, 18, 19, 20, 22],
    "partial_band": [0, 4, 6, 12, 14, 16, 17, 18, 19, 20, 22],
    "empty_band": [0],  # a band past the end of the signature is empty for all: one cluster
    "low_threshold": [0, 4, 6, 12, 14, 16, 18, 19, 20, 22],
    "sentencepiece": [0, 4, 6, 7, 9, 11, 12, 14, 16, 18, 19, 20, 22],
}
BANDS = {"default": (25, 10), "character": (25, 10), "punctuation": (25, 10), "small_bands": (8, 4),
         "partial_band": (5, 4), "empty_band": (3, 4), "low_threshold": (21, 3)}
# values from Data-Juicer 1.6.1: first band of TEXTS[0]'s default signature; TEXTS[16]'s
# signature with small_bands
SIG_0_BAND_0 = [186966786, 57801831, 202786375, 176156031, 286703813, 1039572128, 1195043367, 427636130,
                208197479, 30980875]
SIG_16_SMALL = [742630903, 465672816, 52639139, 388837659, 70447781, 772944846, 625751007, 40485994, 519624842,
                108970658, 177225269, 53310683, 482243076, 523016818, 1031833934, 1094408353, 22379973, 486298931,
                54917783, 108091115, 28383352, 161817804, 283655539, 211896253, 589850030, 319313735, 348750115,
                1569458080, 985054963, 754877915, 285318075, 1260825495]
# values from Data-Juicer 1.6.1: indices removed from generated_corpus()
GENERATED_REMOVED = {
    "default": [12, 18, 24, 31, 33, 39, 43, 44, 48, 61, 62, 64, 71, 73, 92, 94, 103, 117, 123, 130, 131, 136, 137,
                140, 141, 144, 151, 152, 155, 167, 179, 181, 183, 185, 189, 198, 201, 202, 205, 208, 209, 218, 221,
                230, 231, 248, 262, 270, 272, 277, 288, 297],
    "character": [12, 17, 18, 23, 24, 27, 30, 31, 33, 39, 43, 44, 48, 60, 61, 62, 64, 71, 73, 79, 80, 90, 92, 94,
                  103, 111, 117, 118, 123, 126, 130, 131, 136, 137, 140, 141, 144, 151, 152, 155, 156, 167, 179,
                  181, 183, 185, 188, 189, 198, 201, 202, 205, 208, 209, 211, 214, 217, 218, 221, 222, 225, 230,
                  231, 248, 250, 252, 254, 256, 261, 262, 265, 270, 272, 277, 288, 297],
}
GENERATED_PARAMS = {"default": {}, "character": {"tokenization": "character", "window_size": 8}}
# values from Data-Juicer 1.6.1's optimal_param: (threshold, permutations) -> (bands, rows)
OPTIMAL = {(0.7, 256): (25, 10), (0.8, 256): (17, 15), (0.5, 256): (42, 6), (0.9, 128): (5, 25),
           (0.3, 64): (21, 3), (0.5, 2): (1, 1), (0.5, 3): (1, 1), (0.0, 16): (16, 1), (1.0, 16): (1, 16),
           (0.95, 200): (4, 48), (0.123456, 100): (50, 2), (0.85, 50): (4, 12), (0.7, 1): (1, 1)}


def make(**kw):
    return OPERATORS.get("document_minhash_deduplicator")(**kw)


def hashed(op, texts, batch_size=5):
    rows = [{"text": t, "id": i} for i, t in enumerate(texts)]
    return DJDataset.from_rows(rows).map_batches(op.compute_hash, batch_size=batch_size)


def kept_ids(op, texts, batch_size=5):
    out, _ = op.process(hashed(op, texts, batch_size))
    return out.column("id")


@pytest.mark.parametrize("name", list(PARAMS))
def test_matches_data_juicer(name):
    op = make(**PARAMS[name])
    assert (op.num_bands, op.num_rows_per_band) == BANDS[name]
    assert kept_ids(op, TEXTS) == KEPT[name]


def test_signatures_match_data_juicer():
    sig = make().compute_hash({"text": [TEXTS[0], ""]})[HashKeys.minhash]
    first = np.frombuffer(sig[0], dtype="<u4")
    assert len(first) == 250  # only the 25 x 10 values the bands read
    assert first[:10].tolist() == SIG_0_BAND_0
    assert np.frombuffer(sig[1], dtype="<u4").tolist() == [2**32 - 1] * 250  # no shingles
    small = make(**PARAMS["small_bands"]).compute_hash({"text": [TEXTS[16]]})[HashKeys.minhash][0]
    assert np.frombuffer(small, dtype="<u4").tolist() == SIG_16_SMALL


@pytest.mark.parametrize("args", list(OPTIMAL))
def test_optimal_bands_match_data_juicer(args):
    assert optimal_lsh_params(*args) == OPTIMAL[args]


@pytest.mark.parametrize("name", list(GENERATED_PARAMS))
def test_generated_corpus_matches_data_juicer(name):
    docs = generated_corpus()
    op = make(**GENERATED_PARAMS[name])
    kept = kept_ids(op, docs, batch_size=64)
    assert sorted(set(range(len(docs))) - set(kept)) == GENERATED_REMOVED[name]
    # signatures do not depend on how documents are batched (long documents span blocks)
    one_batch = op.compute_hash({"text": docs})[HashKeys.minhash]
    assert hashed(op, docs, batch_size=64).column(HashKeys.minhash) == one_batch


def test_process_drops_the_hash_column_and_reports_pairs():
    op = make()
    ds = hashed(op, TEXTS)
    out, pairs = op.process(ds)
    assert HashKeys.minhash not in out.column_names and pairs == {}
    _, pairs = op.process(ds, show_num=2)
    # clusters in order of their first duplicate: 1 duplicates 0, then 5 duplicates 4
    assert {k: [r["id"] for r in v] for k, v in pairs.items()} == {0: [0, 1], 4: [4, 5]}
    assert HashKeys.minhash not in pairs[0][0]
    single, pairs = op.process(hashed(op, TEXTS[:1]))
    assert single.column("id") == [0] and HashKeys.minhash not in single.column_names and pairs == {}


def test_existing_hashes_are_reused():
    samples = {"text": ["a b c d e f"], HashKeys.minhash: [b"x"]}
    assert make().compute_hash(samples)[HashKeys.minhash] == [b"x"]


def test_hashes_from_other_parameters_are_rejected():
    ds = hashed(make(num_permutations=64), TEXTS)
    with pytest.raises(ValueError, match="hash again"):
        make().process(ds)


def test_bad_parameters_are_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown tokenization 'words'"):
        make(tokenization="words")
    with pytest.raises(ValueError, match="tokenizer_model"):
        make(tokenization="sentencepiece")
    if is_available("sentencepiece"):
        monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
        with pytest.raises(FileNotFoundError, match="xx.sp.model"):
            make(tokenization="sentencepiece", tokenizer_model="xx.sp.model")


@pytest.fixture
def sp_model(tmp_path):
    if not is_available("sentencepiece"):
        pytest.skip("sentencepiece tokenization needs sentencepiece (pip install sentencepiece)")
    path = tmp_path / "dedup.sp.model"
    if train_sentencepiece(str(path)) != "89725baea34f79efb483e8da0bc03c88":
        pytest.skip("this sentencepiece version trains a different model than the one Data-Juicer was run with")
    return path


def test_sentencepiece_matches_data_juicer(sp_model, monkeypatch):
    op = make(tokenization="sentencepiece", window_size=4, tokenizer_model=str(sp_model))
    assert kept_ids(op, TEXTS) == KEPT["sentencepiece"]
    monkeypatch.setenv(MODELS_DIR_ENV, str(sp_model.parent))  # a model name is looked up in the models folder
    op = make(tokenization="sentencepiece", window_size=4, tokenizer_model=sp_model.name)
    assert kept_ids(op, TEXTS) == KEPT["sentencepiece"]


@pytest.mark.parametrize("name", ["default", "character", "punctuation", "partial_band"])
def test_compiled_and_numpy_signatures_agree(name, monkeypatch):
    from data_juicer.ops.common import minhash_numba

    if not minhash_numba.available():
        pytest.skip("numba is not installed (or unusable): only the numpy path runs")
    docs = TEXTS + generated_corpus(60, seed=5)
    op = make(**PARAMS[name])
    compiled = op.compute_hash({"text": docs})[HashKeys.minhash]
    monkeypatch.setattr(minhash_numba, "available", lambda: False)
    assert op.compute_hash({"text": docs})[HashKeys.minhash] == compiled
