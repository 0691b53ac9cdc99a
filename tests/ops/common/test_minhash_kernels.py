"""The compiled MinHash kernels: OpenSSL's SHA-1 blocks (``sign_ossl``) give the same signatures
as numba's SHA-1 (``sign``) and as the numpy path over ``hashlib``."""
import hashlib

import numpy as np
import pytest

from data_juicer.ops.common import minhash_numba
from data_juicer.ops.common.minhash import permutations, shingle_hashes, signatures
from data_juicer.ops.common.shingles import shingles

pytestmark = pytest.mark.skipif(not minhash_numba.available(), reason="numba is not installed (or unusable)")

# message sizes around SHA-1's block edges (55/56: one or two padded blocks; 64, 119/120, 128 ...)
EDGE_WORDS = ["x" * n for n in (1, 54, 55, 56, 57, 63, 64, 65, 118, 119, 120, 128, 190, 300)]
TEXTS = [
    "",
    "one",
    "a b c d e",
    "the quick brown fox jumps over the lazy dog " * 3,
    "double  spaced   words    make non contiguous shingles  here",  # shingles copied out of the text
    "   leading and trailing   ",
    " ".join(EDGE_WORDS),
    "ünïcödé wörds — “quoted” 中文 字符 测试 文本 更多 的 字",
    " ".join(w + " a b" for w in EDGE_WORDS),
]


def kernels():
    from data_juicer.ops.common import minhash_kernels as k

    return k


def run(kernel, texts, tokenization, window, a, b):
    k = kernels()
    buf, off = minhash_numba._concat([t.encode("utf-8") for t in texts])
    starts, ends, doc_tok = (k.space_tokens if tokenization == "space" else k.char_tokens)(buf, off)
    out = np.empty((len(texts), len(a)), dtype=np.uint32)
    kernel(buf, starts, ends, doc_tok, window, 32 if tokenization == "space" else -1, a, b, out)
    return out


def test_openssl_sha1_is_used_here():
    # hashlib is OpenSSL-backed on our platforms: the faster kernel is the one the op uses
    assert minhash_numba._kernels()[2] is kernels().sign_ossl


@pytest.mark.parametrize("tokenization,window", [("space", 5), ("space", 1), ("space", 3), ("character", 3),
                                                 ("character", 70)])
def test_openssl_numba_and_hashlib_signatures_agree(tokenization, window):
    a, b = permutations(40)
    k = kernels()
    ossl = run(k.sign_ossl, TEXTS, tokenization, window, a, b)
    numba_sha = run(k.sign, TEXTS, tokenization, window, a, b)
    assert (ossl == numba_sha).all()
    # the numpy path: hashlib over each shingle set (Data-Juicer's way)
    ref = signatures([shingle_hashes(set(shingles(t, tokenization, window))) for t in TEXTS], a, b)
    assert (ossl == ref).all()


def test_sha1_heads_literal():
    # window 1, identity permutation: each value is the first 4 bytes of SHA-1(word), little-endian
    one, zero = np.ones(1, dtype=np.uint64), np.zeros(1, dtype=np.uint64)
    out = run(kernels().sign_ossl, ["abc", "x" * 64], "space", 1, one, zero)
    assert out[:, 0].tolist() == [0x363e99a9, 0xeea32fbb]  # SHA-1("abc") = a9993e36...  (FIPS 180 test vector)
    assert out[0, 0] == int.from_bytes(hashlib.sha1(b"abc").digest()[:4], "little")


def test_env_switch_selects_numba_sha1(monkeypatch):
    monkeypatch.setenv("DJ_MINHASH_OPENSSL", "0")
    monkeypatch.setattr(minhash_numba, "_KERNELS", None)
    assert minhash_numba._kernels()[2] is kernels().sign
    monkeypatch.setattr(minhash_numba, "_KERNELS", None)  # the next caller probes again


def test_missing_libcrypto_falls_back(monkeypatch):
    monkeypatch.setattr(minhash_numba, "_libcrypto_path", lambda: None)
    assert minhash_numba._openssl_usable(kernels()) is False
