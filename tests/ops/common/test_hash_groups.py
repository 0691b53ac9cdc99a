import numpy as np
import pyarrow as pa
import pytest

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from data_juicer.ops.common import hash_groups
from data_juicer.ops.common.hash_groups import first_equal_rows, fixed_width_blocks
from data_juicer.utils.constant import HashKeys

A, B, C = "a" * 32, "0123456789abcdef" * 2, "f" * 31 + "0"


def test_fixed_width_blocks_are_views_of_the_values():
    col = pa.chunked_array([pa.array([A, B]), pa.array([], pa.string()), pa.array([C])])
    blocks = fixed_width_blocks(col, 32)
    assert [b.shape for b in blocks] == [(2, 8), (1, 8)]  # the empty chunk is skipped
    assert blocks[0][0].tolist() == [0x61616161] * 8
    assert blocks[0][1, :2].tolist() == [0x33323130, 0x37363534]  # "0123", "4567" little-endian
    assert blocks[1][0, 7].tolist() == 0x30666666  # "fff0"


@pytest.mark.parametrize("values", [[A, "short"], [A, None], [1, 2]])
def test_fixed_width_blocks_refuse_other_values(values):
    assert fixed_width_blocks(pa.chunked_array([pa.array(values)]), 32) is None


def test_fixed_width_blocks_of_a_sliced_chunk():
    col = pa.chunked_array([pa.array([C, A, B, A]).slice(1, 3)])
    (block,) = fixed_width_blocks(col, 32)
    assert first_equal_rows([block]).tolist() == [0, 1, 0]


def test_first_equal_rows_across_chunks():
    col = pa.chunked_array([pa.array([A, B, A]), pa.array([C, B]), pa.array([A, C, C])])
    head = first_equal_rows(fixed_width_blocks(col, 32))
    assert head.tolist() == [0, 1, 0, 3, 1, 0, 3, 3]
    assert first_equal_rows([]).tolist() == []


def test_first_equal_rows_detects_a_key_collision(monkeypatch):
    # every row gets the same 64-bit key: the exact check must see the different values and give up
    monkeypatch.setattr(hash_groups, "_keys", lambda blocks: np.zeros(sum(len(b) for b in blocks), np.uint64))
    col = pa.chunked_array([pa.array([A, A, B])])
    assert first_equal_rows(fixed_width_blocks(col, 32)) is None
    col = pa.chunked_array([pa.array([A, A]), pa.array([A])])  # equal values: the same key is right
    assert first_equal_rows(fixed_width_blocks(col, 32)).tolist() == [0, 0, 0]


@pytest.mark.parametrize("collide", [False, True])
def test_document_deduplicator_same_rows_on_both_paths(monkeypatch, collide):
    """The numpy grouping and the dictionary fallback (taken on a key collision) keep the same rows and
    report the same duplicate pairs, over a chunked column."""
    if collide:
        monkeypatch.setattr(hash_groups, "_keys", lambda blocks: np.zeros(sum(len(b) for b in blocks), np.uint64))
    hashes = [A, B, A, C, B, A, "x" * 32, C, A]
    table = pa.table({"text": [f"t{i}" for i in range(len(hashes))], HashKeys.hash: hashes})
    import datasets

    ds = DJDataset(datasets.Dataset(datasets.table.InMemoryTable(
        pa.Table.from_batches(table.to_batches(max_chunksize=4)))))
    op = OPERATORS.get("document_deduplicator")()
    kept, pairs = op.process(ds, show_num=2)
    assert kept.column("text") == ["t0", "t1", "t3", "t6"]
    # most duplicated first (A: 4 rows, then B and C with 2 each, B first seen)
    assert {h: [r["text"] for r in rows] for h, rows in pairs.items()} == {A: ["t0", "t2"], B: ["t1", "t4"]}
    assert list(pairs) == [A, B]
