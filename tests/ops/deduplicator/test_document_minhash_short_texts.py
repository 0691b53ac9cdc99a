"""document_minhash_deduplicator's ``short_texts`` (ours): what happens to texts shorter than the shingle."""
import numpy as np
import pytest

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import HashKeys

TEXTS = [
    "a b c",  # 0: 3 words, shorter than the 5-word shingle
    "a b c",  # 1: copy of 0
    "x y",  # 2: another short text
    "one two three four five six seven",  # 3
    "one two three four five six seven",  # 4: copy of 3
    "",  # 5: empty
    "",  # 6: empty
    "A  B C",  # 7: 0 once lower-cased (runs of spaces give no empty words)
    "a b d",  # 8: short, one word off 0
]


def kept(texts=TEXTS, batch_size=4, **kw):
    op = OPERATORS.get("document_minhash_deduplicator")(**kw)
    rows = [{"text": t, "id": i} for i, t in enumerate(texts)]
    ds = DJDataset.from_rows(rows).map_batches(op.compute_hash, batch_size=batch_size)
    out, _ = op.process(ds)
    return out.column("id")


def test_default_is_data_juicer_one_cluster_of_all_short_texts():
    assert kept() == [0, 3]
    assert kept(short_texts="shared") == [0, 3]


def test_whole_makes_a_short_text_one_shingle():
    # 0, 1 and 7 have the same words; 2 and 8 differ; the empty texts 5 and 6 still share one signature
    assert kept(short_texts="whole") == [0, 2, 3, 5, 8]


def test_keep_never_removes_short_texts():
    assert kept(short_texts="keep") == [0, 1, 2, 3, 5, 6, 7, 8]


def test_whole_with_uid_variant():
    op = OPERATORS.get("document_minhash_deduplicator_with_uid")(short_texts="whole")
    rows = [{"text": t, "id": i, HashKeys.uid: 100 - i} for i, t in enumerate(TEXTS)]
    ds = DJDataset.from_rows(rows).map_batches(op.compute_hash, batch_size=4)
    out, _ = op.process(ds)
    # the largest index (smallest uid) of each cluster survives
    assert out.column("id") == [2, 4, 6, 7, 8]


def test_whole_short_signature_is_that_of_one_shingle():
    op = OPERATORS.get("document_minhash_deduplicator")(short_texts="whole", num_permutations=16,
                                                         num_bands=4, num_rows_per_band=4)
    sig = op.compute_hash({"text": ["A b c", "a b c d e", ""]})[HashKeys.minhash]
    short, five, empty = (np.frombuffer(s, dtype="<u4") for s in sig)
    assert (empty == 2**32 - 1).all()  # no tokens at all: as Data-Juicer
    assert not (short == 2**32 - 1).any()
    # "a b c" as a 3-word shingle: the 3-word-window signature of the same text
    three = OPERATORS.get("document_minhash_deduplicator")(window_size=3, num_permutations=16, num_bands=4,
                                                           num_rows_per_band=4)
    assert short.tolist() == np.frombuffer(three.compute_hash({"text": ["a b c"]})[HashKeys.minhash][0],
                                           dtype="<u4").tolist()
    default = OPERATORS.get("document_minhash_deduplicator")(num_permutations=16, num_bands=4, num_rows_per_band=4)
    assert default.compute_hash({"text": ["a b c d e"]})[HashKeys.minhash][0] == sig[1]  # long texts unchanged


@pytest.mark.parametrize("tokenization,window", [("character", 8), ("punctuation", 3)])
def test_whole_other_tokenizations(tokenization, window):
    texts = ["short!", "short!", "shor", "a longer text, with some, punctuation, in it: yes", ""]
    assert kept(texts, tokenization=tokenization, window_size=window) == [0, 3]  # 0, 1, 2 and 4 are short
    got = kept(texts, tokenization=tokenization, window_size=window, short_texts="whole")
    assert got == [0, 2, 3, 4]


def test_compiled_and_numpy_paths_agree(monkeypatch):
    from data_juicer.ops.common import minhash_numba

    if not minhash_numba.available():
        pytest.skip("numba is not installed (or unusable): only the numpy path runs")
    op = OPERATORS.get("document_minhash_deduplicator")(short_texts="whole")
    compiled = op.compute_hash({"text": TEXTS})[HashKeys.minhash]
    monkeypatch.setattr(minhash_numba, "available", lambda: False)
    assert op.compute_hash({"text": TEXTS})[HashKeys.minhash] == compiled


def test_unknown_value_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown short_texts 'drop'"):
        OPERATORS.get("document_minhash_deduplicator")(short_texts="drop")


# ---- simplify (ours): datatrove-like normalisation before tokenizing
def test_simplify_normalises_numbers_punctuation_and_line_breaks():
    op = OPERATORS.get("document_minhash_deduplicator")(simplify=True)
    assert op._prepared(["Hello, World!\n\nIt costs 3.50 $ -- or 12,000...  ok", " \n "]) == [
        "hello world it costs 0 or 0 ok", ""]
    assert OPERATORS.get("document_minhash_deduplicator")()._prepared(["A, b\nc"]) == ["a, b\nc"]  # default: off


def test_simplify_finds_copies_that_differ_in_punctuation_and_lines():
    base = "the quick brown fox jumps over the lazy dog and then runs far away into the woods"
    texts = [base, base.replace(" and ", ",\nand ").replace("woods", "woods!!"), "ten 10 20 30 40 50 60 70 80",
             "ten 11 21 31 41 51 61 71 81"]
    assert kept(texts) == [0, 1, 2, 3]
    # with simplify, 1 is 0 and 3 is 2 (all numbers are 0)
    assert kept(texts, simplify=True) == [0, 2]


# ---- banding: grouping on a 64-bit mix of each band, checked against the exact values
def test_band_grouping_falls_back_to_exact_values_on_key_collisions(monkeypatch):
    from data_juicer.ops.deduplicator import document_minhash_deduplicator as mod

    values = np.array([[1, 2], [3, 4], [1, 2], [5, 6], [3, 4], [1, 2]], dtype=np.uint32)
    assert mod._band_heads(values).tolist() == [0, 1, 0, 3, 1, 0]
    monkeypatch.setattr(mod, "_MIX", np.uint64(0))  # every row gets key 0: all "collide"
    assert mod._band_heads(values).tolist() == [0, 1, 0, 3, 1, 0]
    assert kept() == [0, 3] and kept(short_texts="whole") == [0, 2, 3, 5, 8]
