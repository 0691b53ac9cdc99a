"""The C MinHash kernel (``minhash_c``): the same signatures as the numpy path over ``hashlib`` (and as
numba's kernels), Python's ``str.lower`` bytes, word counts; built once per machine, refused cleanly when
it cannot be built; and a MinHash run with it never imports numba."""
import hashlib
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from data_juicer.ops.common import c_build, minhash_c, minhash_numba
from data_juicer.ops.common.minhash import permutations, shingle_hashes, signatures
from data_juicer.ops.common.shingles import shingles

pytestmark = pytest.mark.skipif(not minhash_c.available(), reason="no C compiler or libcrypto here")

# the same edge cases as the numba kernels' tests: SHA-1 block edges, copied shingles, unicode
from tests.ops.common.test_minhash_kernels import EDGE_WORDS, TEXTS  # noqa: E402


def _buffer(texts):
    return minhash_numba._concat([t.encode("utf-8") for t in texts])


@pytest.mark.parametrize("window", [1, 2, 5, 13])
def test_signatures_are_the_numpy_paths(window):
    a, b = permutations(112)
    want = signatures([shingle_hashes(set(shingles(t, "space", window))) for t in TEXTS], a, b)
    assert np.array_equal(minhash_c.text_signatures(TEXTS, window, a, b), want)
    buf, off = _buffer(["zz"] + TEXTS)  # offsets not from 0
    assert np.array_equal(minhash_c.buffer_signatures(buf, off[1:], window, a, b), want)
    if minhash_numba.available():
        assert np.array_equal(minhash_numba.text_signatures(TEXTS, "space", window, a, b), want)


def test_one_value_by_hand():
    a, b = np.array([3, 2**61 + 5], dtype=np.uint64), np.array([7, 11], dtype=np.uint64)
    h = int.from_bytes(hashlib.sha1(b"b c").digest()[:4], "little")
    g = int.from_bytes(hashlib.sha1(b"a b").digest()[:4], "little")
    want = [min(((x * int(a[j]) + int(b[j])) % 2**64) % (2**61 - 1) % 2**32 for x in (g, h)) for j in range(2)]
    assert minhash_c.text_signatures(["a b c"], 2, a, b)[0].tolist() == want
    assert minhash_c.text_signatures(["a", ""], 2, a, b).tolist() == [[0xFFFFFFFF] * 2] * 2  # no shingle


def test_lower_buffer_is_str_lower():
    texts = TEXTS + ["ÀÉÎÕÜ ΑΒΓ ДЖЯ Ⱥ", "İstanbul ΣΊΣΥΦΟΣ", "MiXeD CaSe ẞ Σ", ""]
    buf, off = _buffer(texts)
    out, out_off = minhash_c.lower_buffer(buf, off)
    got = [out[out_off[d]:out_off[d + 1]].tobytes().decode("utf-8") for d in range(len(texts))]
    assert got == [t.lower() for t in texts]
    assert got[-3] == "i̇stanbul σίσυφος"  # special casing (two code points; final sigma) by Python
    bad = np.frombuffer(b"ok \xff", dtype=np.uint8)
    with pytest.raises(UnicodeDecodeError):  # not UTF-8: as bytes.decode raises
        minhash_c.lower_buffer(bad, np.array([0, 4], dtype=np.int64))


def test_space_counts():
    buf, off = _buffer(["", "one", "  two  words ", "a b c d e", "日本 語"])
    assert minhash_c.space_counts(buf, off).tolist() == [0, 1, 2, 5, 2]


def test_built_once_then_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("DATA_JUICER_CACHE_HOME", str(tmp_path))
    calls = []
    real = subprocess.run
    monkeypatch.setattr(c_build.subprocess, "run", lambda *a, **k: calls.append(a) or real(*a, **k))
    path = minhash_c._build()
    assert path.startswith(str(tmp_path / "kernels")) and path.endswith(".so") and len(calls) == 1
    assert minhash_c._build() == path and len(calls) == 1  # the cached library
    assert sorted(p.name for p in (tmp_path / "kernels").iterdir()) == [path.rsplit("/", 1)[1]]  # no temporaries


def test_unusable_without_a_compiler(tmp_path, monkeypatch):
    monkeypatch.setenv("DATA_JUICER_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setattr(minhash_c, "_LIB", None)
    assert minhash_c.available() is False
    monkeypatch.setattr(minhash_c, "_LIB", None)
    monkeypatch.delenv("CC")
    monkeypatch.setenv("DJ_MINHASH_C", "0")
    assert minhash_c.available() is False
    monkeypatch.setattr(minhash_c, "_LIB", None)
    monkeypatch.setenv("DJ_MINHASH_C", "1")
    monkeypatch.setenv("DJ_C_KERNELS", "off")  # all the C kernels off
    assert minhash_c.available() is False


def test_op_signatures_same_with_c_or_numba(monkeypatch):
    from data_juicer.ops import OPERATORS
    from data_juicer.utils.constant import HashKeys

    texts = TEXTS + ["a b", "A B", "x y z w", "Ünïcode ΣΊΣΥΦΟΣ words here and there"]
    table = pa.table({"text": texts})
    params = dict(tokenization="space", window_size=5, num_permutations=64, num_bands=16, num_rows_per_band=4,
                  short_texts="whole")
    op = OPERATORS.get("document_minhash_deduplicator")(**params)
    with_c = op.hash_table(table, num_threads=2, batch_rows=3)[HashKeys.minhash]
    listed = op.compute_hash({"text": texts})[HashKeys.minhash]
    monkeypatch.setattr(minhash_c, "_LIB", False)  # unusable: numba's kernels, or the numpy path
    op2 = OPERATORS.get("document_minhash_deduplicator")(**params)
    assert with_c.to_pylist() == op2.hash_table(table, num_threads=2, batch_rows=3)[HashKeys.minhash].to_pylist()
    assert listed == op2.compute_hash({"text": texts})[HashKeys.minhash]
    assert with_c.to_pylist() == listed


def test_minhash_run_imports_no_numba(tmp_path):
    code = ("import sys, pyarrow as pa\n"
            "from data_juicer.ops import OPERATORS\n"
            "op = OPERATORS.get('document_minhash_deduplicator')(num_permutations=32, short_texts='whole')\n"
            "col = op.hash_table(pa.table({'text': ['Some words here and there, ok', 'a b']}), num_threads=2)\n"
            "print(len(col['__dj__minhash']), 'numba' in sys.modules, 'llvmlite' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["2", "False", "False"]
