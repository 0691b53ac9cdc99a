import pytest

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import HashKeys

TEXTS = ["Hello World", "hello world", "Hello World", "Hello, World! 123", " Hello World ", "HELLO WORLD",
         "", "  ", "中文 文本", "中文文本", "١٢٣abc", "abc", "a\x1cb", "ab", "x", "x", "x\u2000", "ｘ１２",
         "x𝟎", "Straße", "STRASSE", "x\u00a0", "tab\there"]

HW = "b10a8db164e0754105b7a99be72e3fe5"
EMPTY = "d41d8cd98f00b204e9800998ecf8427e"
X = "9dd4e461268c8034f5c8564e155c67a6"
HW_LOWER = "fc5e038d38a57032085441e7fe7010b0"
CJK = "e94d945e89f340217175787795dbe0e7"
ABC = "900150983cd24fb0d6963f7d28e17f72"
HW_NOPUNCT = "68e109f0f40ca72a15e05cc22786f8e6"

# values from Data-Juicer 1.6.1
HASHES = {
    (False, False): [HW, "5eb63bbbe01eeed093cb22bb8f5acdc3", HW, "8a732eef6124eb6b5aa8c0af2318fdbb", HW,
                     "361fadf1c712e812d198c4cab5712a79", EMPTY, EMPTY, "07457fbdbf161fd5797c1feb17bb0c6c", CJK,
                     "d2ffe281d35c425d7cecfe0a9c2b5829", ABC, "d5cead7ccd893bab6125c3c9dcdef178",
                     "187ef4436122d1cc2f40dc2b92f0eba0", X, X, X, "5666118b59dc4ca69d335d5b5f5c3141",
                     "aa0b45aecbef0f7d12e2fa0950efcdcd", "a763ca073cfda1fce8a14f2f0cc84591",
                     "e070364ed61a06a17353ddaf92fce8d8", X, "844fd4cec7535bdc04e9ba1226b7f358"],
    (True, True): [HW_LOWER] * 6 + [EMPTY, EMPTY, CJK, CJK, ABC, ABC, "d5cead7ccd893bab6125c3c9dcdef178",
                                    "187ef4436122d1cc2f40dc2b92f0eba0", X, X, X, "0201123d97def55f482e5dbd3226f895",
                                    X, "ddc40daba2e976d4891e703081629368", "f68418110b56950369e54315d3634493", X,
                                    "ed5a00ec743ab521c8f1f62dee69fef4"],
}
KEPT = {
    (False, False): ["Hello World", "hello world", "Hello, World! 123", "HELLO WORLD", "", "中文 文本", "中文文本",
                     "١٢٣abc", "abc", "a\x1cb", "ab", "x", "ｘ１２", "x𝟎", "Straße", "STRASSE", "tab\there"],
    (False, True): ["Hello World", "hello world", "HELLO WORLD", "", "中文 文本", "١٢٣abc", "a\x1cb", "ab", "x",
                    "ｘ１２", "Straße", "STRASSE", "tab\there"],
    (True, False): ["Hello World", "Hello, World! 123", "", "中文 文本", "中文文本", "١٢٣abc", "abc", "a\x1cb", "ab",
                    "x", "ｘ１２", "x𝟎", "Straße", "STRASSE", "tab\there"],
    (True, True): ["Hello World", "", "中文 文本", "١٢٣abc", "a\x1cb", "ab", "x", "ｘ１２", "Straße", "STRASSE",
                   "tab\there"],
}
PAIRS = {  # show_num -> {hash: texts of its first two samples}
    (False, False): {1: {X: ["x", "x"]},
                     3: {EMPTY: ["", "  "], X: ["x", "x"], HW: ["Hello World", "Hello World"]}},
    (False, True): {1: {X: ["x", "x"]},
                    3: {X: ["x", "x"], HW_NOPUNCT: ["Hello World", "Hello World"], EMPTY: ["", "  "]},
                    100: {EMPTY: ["", "  "], X: ["x", "x"], HW_NOPUNCT: ["Hello World", "Hello World"],
                          CJK: ["中文 文本", "中文文本"], ABC: ["١٢٣abc", "abc"]}},
    (True, False): {1: {"5eb63bbbe01eeed093cb22bb8f5acdc3": ["Hello World", "hello world"]}},
    (True, True): {3: {HW_LOWER: ["Hello World", "hello world"], EMPTY: ["", "  "], X: ["x", "x"]}},
}


def make(**kw):
    return OPERATORS.get("document_deduplicator")(**kw)


def hashed(op, texts=TEXTS):
    return DJDataset.from_rows([{"text": t, "id": i} for i, t in enumerate(texts)]).map_batches(op.compute_hash)


@pytest.mark.parametrize("flags", list(KEPT))
def test_matches_data_juicer(flags):
    op = make(lowercase=flags[0], ignore_non_character=flags[1])
    ds = hashed(op)
    if flags in HASHES:
        assert ds.column(HashKeys.hash) == HASHES[flags]
    out, pairs = op.process(ds)
    assert out.column("text") == KEPT[flags] and pairs == {}
    for show_num, expected in PAIRS[flags].items():
        out, pairs = op.process(ds, show_num=show_num)
        assert out.column("text") == KEPT[flags]
        assert {h: [r["text"] for r in rows] for h, rows in pairs.items()} == expected


def test_pairs_are_most_duplicated_first_with_whole_samples():
    op = make()
    _, pairs = op.process(hashed(op), show_num=2)
    assert list(pairs) == [X, HW]  # 4 copies of "x", then 3 of "Hello World"
    assert [r["id"] for r in pairs[X]] == [14, 15] and pairs[X][0][HashKeys.hash] == X


def test_keeps_first_occurrence_and_order():
    op = make(lowercase=True)
    out, _ = op.process(hashed(op, ["b", "A", "B", "a", "c", "b"]))
    assert out.column("text") == ["b", "A", "c"] and out.column("id") == [0, 1, 4]


def test_no_duplicates_and_tiny_inputs():
    op = make()
    ds = hashed(op, ["a", "b", "c"])
    assert op.process(ds, show_num=5) == (ds, {})
    one = hashed(op, ["a"])
    assert op.process(one, show_num=5) == (one, {})


def test_existing_hash_column_is_reused():
    op = make()
    batch = {"text": ["a", "b"], HashKeys.hash: ["h", "h"]}
    assert op.compute_hash(batch)[HashKeys.hash] == ["h", "h"]
    out, _ = op.process(DJDataset.from_rows([{"text": "a", HashKeys.hash: "h"}, {"text": "b", HashKeys.hash: "h"}]))
    assert out.column("text") == ["a"]


def test_null_hashes_group_together():
    ds = DJDataset.from_rows([{"text": t, HashKeys.hash: h} for t, h in [("a", None), ("b", "h"), ("c", None)]])
    out, _ = make().process(ds)
    assert out.column("text") == ["a", "b"]
