import pytest
from dedup_test_data import TEXTS, generated_corpus

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import HashKeys

N = len(TEXTS)
PERM = [(i * 7 + 3) % N * 10 for i in range(N)]  # uids in a shuffled order
# values from Data-Juicer 1.6.1: kept ids, and the traced pairs {kept row: [kept id, duplicate id]}
CASES = {
    "ascending": (list(range(N)), {}, 3, [0, 3, 4, 6, 12, 14, 16, 17, 18, 19, 20, 21, 22],
                  {0: [0, 1], 4: [4, 5], 6: [6, 7]}),
    "reversed": (list(range(N))[::-1], {}, 3, [2, 3, 5, 11, 13, 15, 16, 17, 18, 19, 20, 21, 23],
                 {2: [2, 0], 5: [5, 4], 11: [11, 6]}),
    "shuffled": (PERM, {}, 5, [0, 3, 4, 10, 12, 14, 16, 17, 18, 19, 20, 21, 22],
                 {0: [0, 1], 4: [4, 5], 10: [10, 6], 12: [12, 13], 14: [14, 15]}),
    "character": (PERM, {"tokenization": "character", "window_size": 3}, 0,
                  [3, 4, 6, 7, 8, 10, 11, 12, 14, 17, 18, 19, 21, 22], {}),
}
# values from Data-Juicer 1.6.1: rows removed from generated_corpus() with uids (37 i + 11) mod 300
GENERATED_REMOVED = [3, 5, 6, 12, 13, 14, 18, 20, 23, 24, 27, 30, 31, 35, 39, 48, 56, 62, 63, 64, 70, 71, 79, 92, 94,
                     103, 115, 118, 121, 128, 131, 135, 136, 137, 140, 144, 151, 152, 185, 201, 202, 205, 208, 209,
                     218, 230, 231, 248, 270, 272, 277, 288]
GENERATED_PAIRS = {155: [155, 3], 117: [117, 5], 44: [44, 6], 61: [61, 13]}


def make(**kw):
    return OPERATORS.get("document_minhash_deduplicator_with_uid")(**kw)


def hashed(op, texts, uids, batch_size=5):
    rows = [{"text": t, "id": i, HashKeys.uid: u} for i, (t, u) in enumerate(zip(texts, uids))]
    return DJDataset.from_rows(rows).map_batches(op.compute_hash, batch_size=batch_size)


def run(op, texts, uids, show_num=0, batch_size=5):
    out, pairs = op.process(hashed(op, texts, uids, batch_size), show_num=show_num)
    return out.column("id"), {k: [r["id"] for r in v] for k, v in pairs.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_data_juicer(name):
    uids, params, show, kept, pairs = CASES[name]
    assert run(make(**params), TEXTS, uids, show) == (kept, pairs)


def test_generated_corpus_matches_data_juicer():
    docs = generated_corpus()
    uids = [(i * 37 + 11) % len(docs) for i in range(len(docs))]
    kept, pairs = run(make(), docs, uids, show_num=4, batch_size=64)
    assert sorted(set(range(len(docs))) - set(kept)) == GENERATED_REMOVED
    assert pairs == GENERATED_PAIRS


def test_ascending_uids_keep_what_the_plain_op_keeps():
    docs = generated_corpus(120, seed=3)
    plain = OPERATORS.get("document_minhash_deduplicator")()
    out, _ = plain.process(DJDataset.from_rows([{"text": t, "id": i} for i, t in enumerate(docs)])
                           .map_batches(plain.compute_hash, batch_size=50))
    assert run(make(), docs, [10 * i + 5 for i in range(len(docs))])[0] == out.column("id")


def test_incremental_dedup_prefers_old_data():
    old = ["alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"]
    new = ["unrelated words that do not match anything else in this tiny test set", old[0]]
    # the new rows come first but have larger uids: the old copy survives (as in Data-Juicer 1.6.1)
    kept, _ = run(make(), new + old, [100, 101, 1])
    assert kept == [0, 2]


def test_shared_uids_stand_or_fall_together():
    texts = ["one two three four five six", "one two three four five six", "seven eight nine ten eleven twelve"]
    # values from Data-Juicer 1.6.1: a uid is one node, so row 2 goes with row 0 into uid 3's cluster
    assert run(make(), texts, [7, 3, 7])[0] == [1]
    assert run(make(), texts, [3, 3, 9])[0] == [0, 1, 2]  # both rows hold the cluster's smallest uid


def test_column_handling_and_errors():
    op = make()
    out, pairs = op.process(hashed(op, TEXTS[:1], [0]))
    assert out.column("id") == [0] and HashKeys.minhash not in out.column_names and pairs == {}
    out, _ = op.process(hashed(op, TEXTS, range(N)))
    assert HashKeys.minhash not in out.column_names and HashKeys.uid in out.column_names
    no_uid = DJDataset.from_rows([{"text": t} for t in TEXTS[:3]]).map_batches(op.compute_hash)
    with pytest.raises(ValueError, match="no '__dj__uid' column"):
        op.process(no_uid)
    text_uid = DJDataset.from_rows([{"text": t, HashKeys.uid: str(i)} for i, t in enumerate(TEXTS[:3])])
    with pytest.raises(ValueError, match="must hold integers"):
        op.process(text_uid.map_batches(op.compute_hash))
