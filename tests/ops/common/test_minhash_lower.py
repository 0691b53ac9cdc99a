"""``minhash_numba.lower_buffer``: Python's ``str.lower`` of UTF-8 documents in a compiled kernel
(the MinHash op's lower-casing on the Arrow path), and the op's signatures through it."""
import random

import numpy as np
import pyarrow as pa
import pytest

from data_juicer.ops import OPERATORS
from data_juicer.ops.common import minhash_numba
from data_juicer.utils.constant import HashKeys

pytestmark = pytest.mark.skipif(not minhash_numba.available(), reason="the kernel needs numba (numpy path tested elsewhere)")


def lowered(texts):
    buf, off = minhash_numba._concat([t.encode("utf-8") for t in texts])
    out, out_off = minhash_numba.lower_buffer(buf, off)
    return [out[out_off[d]:out_off[d + 1]].tobytes().decode("utf-8") for d in range(len(texts))]


def test_literal_cases():
    texts = ["ABC Def", "", "ΣΑΣ ΟΔΟΣ Σ.", "İstanbul", "ȺȾ", "\u212a\u2126", "𐐀𞤀", "straße ÉÀ", "x"]
    assert lowered(texts) == ["abc def", "", "σας οδος σ.", "i̇stanbul", "ⱥⱦ", "kω", "𐐨𞤢", "straße éà", "x"]
    # U+023A lower-cases to 3 UTF-8 bytes from 2; U+212A (3 bytes) to 1: lengths change both ways
    buf, off = minhash_numba._concat([b"\xc8\xba\xe2\x84\xaa"])
    out, out_off = minhash_numba.lower_buffer(buf, off)
    assert out_off.tolist() == [0, 4] and out[:4].tobytes() == "ⱥk".encode()


def test_table():
    table = minhash_numba.lower_table()
    assert table[ord("A")] == ord("a") and table[ord("a")] == ord("a") and table[0x212A] == ord("k")
    assert table[0x1E900] == 0x1E922 and len(table) == 0x1E921 + 1  # Adlam: the last code point with a lower case


def test_random_code_points_equal_str_lower():
    rng = random.Random(7)
    pool = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    special = [0x41, 0x3A3, 0x3C3, 0x130, 0x20, 0x391, 0x1E900, 0x10400, 0x212A, 0x23A, 0x49, 0x2E]
    texts = []
    for _ in range(2000):
        n = rng.randint(0, 40)
        kind = rng.random()
        cps = ([rng.choice(pool) for _ in range(n)] if kind < 0.4 else [rng.randint(0, 0x600) for _ in range(n)]
               if kind < 0.7 else [rng.choice(special) for _ in range(n)])
        texts.append("".join(map(chr, cps)))
    got = lowered(texts)
    assert sum(g != t.lower() for g, t in zip(got, texts)) == 0


def test_invalid_utf8_raises_as_decode_does():
    with pytest.raises(UnicodeDecodeError):
        minhash_numba.lower_buffer(np.frombuffer(b"ok\xffno", dtype=np.uint8), np.array([0, 5]))


def test_op_signatures_through_kernel_lower_equal_compute_hash():
    texts = ["The QUICK brown Fox jumps over the lazy dog again", "ΣΊΣΥΦΟΣ ΟΔΟΣ and İstanbul and more words",
             "Straße ÀÉÎ ȺȾ words here to shingle", "a B", "", "the quick brown fox JUMPS over the lazy dog again"]
    op = OPERATORS.get("document_minhash_deduplicator")(window_size=3, num_permutations=16, num_bands=4,
                                                        num_rows_per_band=4, short_texts="whole")
    table = pa.table({"text": texts})
    col = op.hash_table(table, num_threads=2, batch_rows=2)[HashKeys.minhash]
    want = op.compute_hash({"text": list(texts)})[HashKeys.minhash]
    assert [v.as_py() for v in col] == want
    sig = np.frombuffer(b"".join(want), dtype="<u4").reshape(len(texts), -1)
    assert (sig[0] == sig[5]).all() and not (sig[0] == sig[1]).all()  # the same text once lower-cased
    assert (sig[4] == 0xFFFFFFFF).all() and not (sig[3] == 0xFFFFFFFF).all()  # empty; short ("whole")


def test_fused_space_kernel_equals_two_kernels():
    from data_juicer.ops.common import minhash_kernels as k
    from data_juicer.ops.common.minhash import permutations

    minhash_numba._kernels()
    if minhash_numba._kernels()[2] is not k.sign_ossl:
        pytest.skip("OpenSSL SHA-1 not loadable here: the fused kernel is not used")
    rng = random.Random(3)
    words = ["a", "bb", "ccc", "dddd", "ü", "中文", "x" * 70]
    texts = ["", "one", "a b", "  a  b   c  ", "a b c d e f"] + [
        "".join(rng.choice(words) + " " * rng.randint(1, 3) for _ in range(rng.randint(0, 300))) for _ in range(60)]
    buf, off = minhash_numba._concat([t.encode() for t in texts])
    a, b = permutations(24)
    for window in (1, 3, 5):
        fused = np.empty((len(texts), 24), dtype=np.uint32)
        k.sign_space_ossl(buf, off, window, a, b, fused)
        starts, ends, doc_tok = k.space_tokens(buf, off)
        two = np.empty_like(fused)
        k.sign_ossl(buf, starts, ends, doc_tok, window, 32, a, b, two)
        assert (fused == two).all()
    # identity permutation (a = 1, b = 0): each value is the smallest shingle's SHA-1 head
    one, zero = np.ones(1, dtype=np.uint64), np.zeros(1, dtype=np.uint64)
    out = np.empty((2, 1), dtype=np.uint32)
    buf, off = minhash_numba._concat([b"a  b c", b"a b c d"])
    k.sign_space_ossl(buf, off, 3, one, zero, out)
    assert out[:, 0].tolist() == [2620604267, min(2620604267, 1901187351)]
