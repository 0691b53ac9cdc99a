import numpy as np
import pytest

from data_juicer.ops.common.simhash_pairs import _block_masks, near_pairs


def test_block_masks_cover_the_64_bits_once():
    masks = [int(m) for m in _block_masks(6)]
    assert [m.bit_count() for m in masks] == [11, 10, 11, 11, 10, 11]
    assert sum(masks) == 2**64 - 1 and masks[0] == 0x7FF
    assert [int(m) for m in _block_masks(64)] == [1 << i for i in range(64)]


def test_near_pairs_literal():
    values = np.array([0, 0b1111, 0b11111, 1 << 63, (1 << 63) | 0b111, 2**64 - 1], dtype=np.uint64)
    u, v = near_pairs(values, 6, 4)
    # 0-15: 4 bits, 0-31: 5 (no), 15-31: 1, 0-2^63: 1, 0-(2^63|7): 4, 15-(2^63|7): 2, 15-2^63: 5 (no),
    # 31-(2^63|7): 3, 2^63-(2^63|7): 3, 2^64-1: 59 or more from all
    assert list(zip(u.tolist(), v.tolist())) == [(0, 1), (0, 3), (0, 4), (1, 2), (1, 4), (2, 4), (3, 4)]
    u, v = near_pairs(values, 6, 1)
    assert list(zip(u.tolist(), v.tolist())) == [(0, 3), (1, 2)]
    assert [x.tolist() for x in near_pairs(values[:1], 6, 4)] == [[], []]


def test_near_pairs_bad_parameters():
    with pytest.raises(ValueError, match="num_blocks"):
        near_pairs(np.zeros(2, np.uint64), 4, 4)


@pytest.mark.parametrize("blocks,distance", [(6, 4), (5, 3), (8, 2)])
def test_near_pairs_equal_simhash_pybind_find_all(blocks, distance):
    simhash = pytest.importorskip("simhash")
    rng = np.random.default_rng(blocks * 10 + distance)
    base = rng.integers(0, 2**64, size=3000, dtype=np.uint64)
    near = base[rng.integers(0, 3000, size=1500)]
    for _ in range(4):  # 1-4 flipped bits (some flips undo each other)
        near ^= np.uint64(1) << rng.integers(0, 64, size=len(near)).astype(np.uint64)
    values = np.unique(np.concatenate([base, near, base[:40] ^ np.uint64(0xF0F0)]))  # a few at 8 bits
    u, v = near_pairs(values, blocks, distance)
    ours = {(int(values[i]), int(values[j])) for i, j in zip(u, v)}
    theirs = {tuple(sorted(p)) for p in simhash.find_all(values.tolist(), blocks, distance)}
    assert len(ours) == len(u) > 90
    assert ours == theirs
