"""The dedup global steps' bounded-memory grouping: packed sorted keys (document_deduplicator) and the
SimHash clusters over distinct values in order of first appearance (document_simhash_deduplicator)."""

import numpy as np
import pyarrow as pa
import pytest

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from data_juicer.ops.common import hash_groups, simhash_pairs
from data_juicer.ops.common.hash_groups import first_equal_rows, first_rows, fixed_width_blocks, mask_rows
from data_juicer.ops.common.simhash_pairs import first_of_each_value, near_pairs
from data_juicer.utils.constant import HashKeys

A, B, C = "a" * 32, "0123456789abcdef" * 2, "f" * 31 + "0"


def _blocks(*chunks):
    return fixed_width_blocks(pa.chunked_array([pa.array(c, pa.string()) for c in chunks]), 32)


def test_first_rows_literal_across_chunks():
    first, head = first_rows(_blocks([A, B, A], [C, B], [A, C, C]), want_head=True)
    assert first.tolist() == [0, 1, 3] and first.dtype == np.int32
    assert head.tolist() == [0, 1, 0, 3, 1, 0, 3, 3]
    first, head = first_rows(_blocks([C]))
    assert first.tolist() == [0] and head is None
    assert first_rows([])[0].tolist() == []


@pytest.mark.parametrize("keys", ["zero", "top4"])
def test_first_rows_splits_key_collisions_exactly(monkeypatch, keys):
    """Every row (zero) or most rows (top 4 bits only) share a truncated key: the groups are split on the
    exact values, same rows as without collisions."""
    real = hash_groups._keys
    if keys == "zero":
        monkeypatch.setattr(hash_groups, "_keys", lambda b: np.zeros(sum(len(x) for x in b), np.uint64))
    else:
        monkeypatch.setattr(hash_groups, "_keys", lambda b: real(b) & np.uint64(0xF000000000000000))
    monkeypatch.setattr(hash_groups, "_CHECK_ROWS", 3)  # slices end inside groups
    first, head = first_rows(_blocks([A, B, A, C], [B, A, "x" * 32, C, A]), want_head=True)
    assert first.tolist() == [0, 1, 3, 6]
    assert head.tolist() == [0, 1, 0, 3, 1, 0, 6, 3, 0]


def test_first_rows_equal_first_equal_rows_on_random_hashes():
    rng = np.random.default_rng(7)
    base = rng.integers(0, 3000, size=9000)
    hexes = [f"{v:032x}" for v in base.tolist()]
    blocks = _blocks(hexes[:4000], hexes[4000:])
    head = first_equal_rows(blocks)
    first, head2 = first_rows(blocks, want_head=True)
    assert len(first) == len(np.unique(base)) == 2842
    assert first.tolist() == np.flatnonzero(head == np.arange(9000)).tolist()
    assert head2.tolist() == head.tolist()


def test_mask_rows():
    mask = np.zeros(3_000_000, dtype=bool)
    mask[[0, 5, 1_048_575, 1_048_576, 2_999_999]] = True
    rows = mask_rows(mask)
    assert rows.tolist() == [0, 5, 1_048_575, 1_048_576, 2_999_999] and rows.dtype == np.int32
    assert mask_rows(np.zeros(0, bool)).tolist() == []


def test_first_of_each_value():
    values = np.array([5, 3, 5, 7, 3, 3, 2**64 - 1, 7], dtype=np.uint64)
    first = first_of_each_value(values)
    assert first.tolist() == [0, 1, 3, 6] and first.dtype == np.int32
    assert first_of_each_value(np.zeros(0, np.uint64)).tolist() == []


def test_first_of_each_value_across_slices(monkeypatch):
    monkeypatch.setattr(hash_groups, "_CHECK_ROWS", 4)
    values = np.array([9, 1, 9, 9, 1, 4, 4, 4, 4, 0, 9], dtype=np.uint64)
    assert first_of_each_value(values).tolist() == [0, 1, 5, 9]


@pytest.mark.parametrize("blocks,distance,calls", [(6, 4, (15, 0)), (6, 1, (0, 6)), (5, 1, (4, 1))])
def test_near_pairs_both_paths_equal_simhash_pybind(blocks, distance, calls):
    """~4,500 values (13 index bits). (6, 4): each choice of 2 blocks (21-22 bits) fits in a packed key;
    (6, 1): 5 blocks (53-54 bits) never do (the argsort path); (5, 1): 4 blocks of 13, 13, 12, 13, 13 bits
    fit (51 bits) except the one without the 12-bit block (52)."""
    simhash = pytest.importorskip("simhash")
    rng = np.random.default_rng(blocks + distance)
    base = rng.integers(0, 2**64, size=3000, dtype=np.uint64)
    near = base[rng.integers(0, 3000, size=1500)] ^ (np.uint64(1) << rng.integers(0, 64, 1500).astype(np.uint64))
    values = np.unique(np.concatenate([base, near]))
    assert 4096 < len(values) <= 8192
    made = {"packed": 0, "sorted": 0}
    real_p, real_s = simhash_pairs._packed_pairs, simhash_pairs._sorted_pairs

    lists = []

    def count(name, fn):
        def wrapped(*a):
            made[name] += 1
            lists.append(a[-1])
            return fn(*a)
        return wrapped

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(simhash_pairs, "_packed_pairs", count("packed", real_p))
        mp.setattr(simhash_pairs, "_sorted_pairs", count("sorted", real_s))
        u, v = near_pairs(values, blocks, distance)
    assert (made["packed"], made["sorted"]) == calls
    ours = {(int(values[i]), int(values[j])) for i, j in zip(u, v)}
    theirs = {tuple(sorted(p)) for p in simhash.find_all(values.tolist(), blocks, distance)}
    assert len(ours) == len(u) >= 1400 and ours == theirs
    # each pair recorded once, under the first choice of blocks it agrees on (one list for all choices)
    assert all(f is lists[0] for f in lists) and sum(len(f) for f in lists[0]) == len(u)


X, Y, Z = 0xFFFF000000000000, 0xFF, 0x0F0F0F0F00000000


def _simhash_ds(values, chunk=None):
    table = pa.table({"id": list(range(len(values))), HashKeys.simhash: [str(v) for v in values]})
    if chunk:
        table = pa.Table.from_batches(table.to_batches(max_chunksize=chunk))
    import datasets

    return DJDataset(datasets.Dataset(datasets.table.InMemoryTable(table)))


@pytest.mark.parametrize("chunk", [None, 2])
def test_simhash_clusters_keep_the_first_row_not_the_smallest_value(chunk):
    # rows 0 and 2 are near (1 bit), 1, 3 and 4 are near or equal; Y < Z < X, so sorting by value puts
    # row 1's cluster first: the kept rows are still the first of each cluster, in row order
    values = [X, Y, X ^ 1, Y ^ 0b11, Y, Z, 0xF0000, 0xFF0000, 0xFFF0000]
    op = OPERATORS.get("document_simhash_deduplicator")()
    kept, pairs = op.process(_simhash_ds(values, chunk), show_num=3)
    # rows 6-8 form one cluster through row 7 (4 bits each side; rows 6 and 8 are 8 bits apart)
    assert kept.column("id") == [0, 1, 5, 6]
    assert {k: [r["id"] for r in v] for k, v in pairs.items()} == {0: [0, 2], 1: [1, 3], 6: [6, 7]}
    kept, pairs = op.process(_simhash_ds(values, chunk))
    assert kept.column("id") == [0, 1, 5, 6] and pairs == {}


def test_simhash_process_equals_the_unique_based_grouping():
    """Against the former formulation (np.unique with inverse over the values, nodes in value order)."""
    from data_juicer.ops.common.union_find import min_component_labels

    rng = np.random.default_rng(3)
    base = rng.integers(0, 2**64, size=4000, dtype=np.uint64)
    values = base[rng.integers(0, 4000, size=12000)]  # exact repeats
    flip = rng.random(12000) < 0.3
    values[flip] ^= np.uint64(1) << rng.integers(0, 64, int(flip.sum())).astype(np.uint64)
    distinct, which = np.unique(values, return_inverse=True)
    u, v = near_pairs(distinct, 6, 4)
    labels = min_component_labels(len(distinct), u, v)[which]
    _, first = np.unique(labels, return_index=True)
    op = OPERATORS.get("document_simhash_deduplicator")()
    kept, _ = op.process(_simhash_ds(values.tolist(), chunk=5000))
    assert kept.column("id") == np.sort(first).tolist()
    assert 3000 < len(first) < 4000


def test_simhash_md5_head_equals_hashlib_for_every_length():
    """The written-out MD5 (one and several 64-byte blocks, the 55/56-byte padding edge) gives the first 8
    bytes of hashlib's MD5, big-endian."""
    import hashlib

    from data_juicer.ops.common import simhash_numba

    if not simhash_numba.available():
        pytest.skip("numba kernels unusable here: the op uses the Python path")
    from data_juicer.ops.common import simhash_kernels as k

    block, state = np.zeros(64, np.uint8), np.zeros(4, np.uint64)
    for n in range(200):
        msg = bytes((7 * n + 13 * j) % 256 for j in range(n))
        src = np.frombuffer(b"xy" + msg + b"z", np.uint8)
        got = int(k.md5_head_fast(src, 2, n, block, block.view(np.uint32), state))
        assert got == int.from_bytes(hashlib.md5(msg).digest()[:8], "big"), n
    assert int(k.md5_head_fast(np.zeros(1, np.uint8), 0, 0, block, block.view(np.uint32), state)) == 0xD41D8CD98F00B204


def test_space_simhashes_literal():
    from data_juicer.ops.common import simhash_numba

    if not simhash_numba.available():
        pytest.skip("numba kernels unusable here: the op uses the Python path")
    # equal to the Python path (hashlib MD5 + simhash-pybind's compute, as Data-Juicer 1.6.1); a text with
    # fewer words than the window has no shingles (0)
    texts = ["a b c", "the quick brown fox jumps over the lazy dog", "x  y z"]
    got = simhash_numba.space_simhashes(texts, 2).tolist()
    assert got == [345032579217117222, 2986305419909545984, 9228304446117793804]
    op = OPERATORS.get("document_simhash_deduplicator")(window_size=2, lowercase=False)
    compute = pytest.importorskip("simhash").compute
    assert got == [op._simhash(t, compute) for t in texts]
    assert simhash_numba.space_simhashes(["one two"], 6).tolist() == [0]
