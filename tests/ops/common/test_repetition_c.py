"""The C kernels of the text filters (``repetition_c``) give, bit for bit, numba's kernels' results
(``repetition_kernels``, the spec) and the Python references' (char_rep_ratio, word_rep_ratio over
refine_words(split_words), count_alnum, count_special); ``repetition_numba`` uses them first and falls
back to numba without them; the 18-op recipe's filters and SimHash then run without importing numba."""
import random
import subprocess
import sys

import numpy as np
import pytest

from data_juicer.ops.common import c_build, minhash_numba, repetition_c, repetition_numba
from data_juicer.ops.common.strip_characters import special_table
from data_juicer.ops.common.text_words import refine_words, split_words
from data_juicer.ops.filter.character_repetition_filter import char_rep_ratio
from data_juicer.ops.filter.word_repetition_filter import word_rep_ratio

pytestmark = pytest.mark.skipif(not repetition_c.available(), reason="no C compiler here")

PIECES = ["a", "b", "the", "Cat", "cat!", "...", "42", "😀", " ", "  ", "\n", "\t", "\r", "\u3000", "中文", "(x)",
          "é", "—", "-", "dog,", "\xa0", "ß", "İ", "Σ", "\ud800", "", "abcabc", "xyzxyzxyz"]
EDGE = ["", "a", " ", "\n\t ", "ab", "abcabcabc", "😀" * 30, "中文 测试 " * 40, "..., !!! ???", "\ud800\udfff x",
        "the cat the, cat the! dog", "x y " * 2000, "abcdefghij" * 20, "(a) [b] {c} " * 30]


def _texts(seed, k, longest=80):
    rng = random.Random(seed)
    return EDGE + ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, longest))) for _ in range(k)]


def _numba():
    if not minhash_numba.numba_usable():
        pytest.skip("numba not usable here")
    from data_juicer.ops.common import repetition_kernels

    return repetition_kernels


def _run(mod, name, *args, dtype=np.float64, k):
    out = np.empty(k, dtype=dtype)
    getattr(mod, name)(*args, out)
    return out


def test_probe_literals():
    codes, off = repetition_c._codes(["abcabcabc", "ab", "", "abcdefghij" * 20])
    assert _run(repetition_c, "char_rep_ratios", codes, off, 2, k=4)[:3].tolist() == [0.375, 0.0, 0.0]
    assert _run(repetition_c, "char_rep_ratios", codes, off, 10, k=4)[3] == 58 / 191
    codes, off = repetition_c._codes(["the cat the, cat the! dog", "x y x y x", "a  b\n\nc\td ...", ""])
    sp = special_table()
    assert _run(repetition_c, "text_word_rep_ratios", codes, off, sp, 2, k=4).tolist() == [0.8, 1.0, 0.0, 0.0]
    assert _run(repetition_c, "count_words", codes, off, sp, dtype=np.int64, k=4).tolist() == [6, 5, 4, 0]
    assert _run(repetition_c, "table_counts", codes, off, sp, dtype=np.int64, k=4).tolist() == [7, 4, 9, 0]


@pytest.mark.parametrize("n", [1, 2, 3, 10, 200])
def test_char_ratios_equal_numba_and_python(n):
    texts = _texts(n, 600, longest=400)
    codes, off = repetition_c._codes(texts)
    got = _run(repetition_c, "char_rep_ratios", codes, off, n, k=len(texts))
    assert got.tolist() == [char_rep_ratio(t, n) for t in texts]
    if n == 200:
        assert got[:6].tolist() == [0.0] * 6  # texts shorter than n
    assert got.tobytes() == _run(_numba(), "char_rep_ratios", codes, off, n, k=len(texts)).tobytes()


@pytest.mark.parametrize("n", [1, 2, 5, 10, 100])
def test_text_word_ratios_and_counts_equal_numba_and_python(n):
    texts = _texts(100 + n, 600)
    codes, off = repetition_c._codes(texts)
    sp = special_table()
    got = _run(repetition_c, "text_word_rep_ratios", codes, off, sp, n, k=len(texts))
    words = [refine_words(split_words(t)) for t in texts]
    assert got.tolist() == [word_rep_ratio(w, n) for w in words]
    counts = _run(repetition_c, "count_words", codes, off, sp, dtype=np.int64, k=len(texts))
    assert counts.tolist() == [len(w) for w in words]
    k = _numba()
    assert got.tobytes() == _run(k, "text_word_rep_ratios", codes, off, sp, n, k=len(texts)).tobytes()
    assert counts.tolist() == _run(k, "count_words", codes, off, sp, dtype=np.int64, k=len(texts)).tolist()


@pytest.mark.parametrize("n", [2, 3, 10])
def test_word_hash_ratios_equal_numba_and_python(n):
    rng = random.Random(n)
    lists = [[rng.choice(["a", "b", "c", "dé", "😀", "x" * 9]) for _ in range(rng.randint(n + 63, 500))]
             for _ in range(200)]
    got = repetition_numba.word_rep_ratios(lists, n)  # the C kernel: the library loads
    assert got.tolist() == [word_rep_ratio(w, n) for w in lists]
    off = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in lists], out=off[1:])
    hashes = np.array([hash(x) for w in lists for x in w], dtype=np.int64).view(np.uint64)
    want = _run(_numba(), "word_rep_ratios", hashes, off, n, k=len(lists))
    assert got.tobytes() == want.tobytes()


def test_table_counts_equal_numba_and_python():
    from data_juicer.ops.filter import alphanumeric_filter as af
    from data_juicer.ops.filter import special_characters_filter as sf

    texts = _texts(7, 600) + ["𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐍈 😀😀 ١٢٣", "abc123 _-!"]
    assert af.count_alnum_batch(texts) == [af.count_alnum(t) for t in texts]
    assert sf.count_special_batch(texts) == [sf.count_special(t) for t in texts]
    codes, off = repetition_c._codes(texts)
    table = np.zeros(0x110000, dtype=np.bool_)  # a bool table is read as 0/1 bytes
    table[[ord(c) for c in "a😀中"]] = True
    got = _run(repetition_c, "table_counts", codes, off, table, dtype=np.int64, k=len(texts))
    assert got.tolist() == [sum(c in "a😀中" for c in t) for t in texts]
    assert got.tolist() == _run(_numba(), "table_counts", codes, off, table.view(np.uint8), dtype=np.int64,
                                k=len(texts)).tolist()
    short = np.ones(0x80, dtype=np.uint8)  # code points past the table's end count 0
    assert _run(repetition_c, "table_counts", *repetition_c._codes(["aé😀b", ""]), short, dtype=np.int64,
                k=2).tolist() == [2, 0]


def test_bad_arguments_are_refused():
    codes, off = repetition_c._codes(["abc"])
    with pytest.raises(ValueError, match="at least 1"):
        repetition_c.char_rep_ratios(codes, off, 0, np.empty(1))
    with pytest.raises(TypeError, match="float64"):
        repetition_c.char_rep_ratios(codes, off, 2, np.empty(1, dtype=np.float32))
    with pytest.raises(ValueError, match="offsets"):
        repetition_c.char_rep_ratios(codes, np.array([0, 9]), 2, np.empty(1))
    with pytest.raises(ValueError, match="fewer than n = 4"):
        repetition_c.word_rep_ratios(np.arange(3, dtype=np.uint64), np.array([0, 3]), 4, np.empty(1))
    with pytest.raises(TypeError, match="uint8 or bool"):
        repetition_c.table_counts(codes, off, np.ones(200, dtype=np.int32), np.empty(1, dtype=np.int64))


def test_switched_off_or_no_compiler_falls_back_to_numba(tmp_path, monkeypatch):
    texts = ["abcabcabc x", "the cat the cat"]
    want = (repetition_numba.char_rep_ratios(texts, 2).tolist(), repetition_numba.count_words(texts),
            repetition_numba.text_word_rep_ratios(texts, 2))
    assert want == ([6 / 10, 4 / 14], [2, 4], [0.0, 2 / 3])
    monkeypatch.setenv("DATA_JUICER_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setattr(repetition_c, "_LIB", None)
    assert repetition_c.available() is False and not list((tmp_path / "kernels").iterdir())  # no temporaries left
    monkeypatch.setattr(repetition_c, "_LIB", None)
    monkeypatch.delenv("CC")
    monkeypatch.setenv("DJ_C_KERNELS", "0")
    assert repetition_c.available() is False and not c_build.enabled("DJ_MINHASH_C")
    if minhash_numba.numba_usable():
        assert repetition_numba._kernels().__name__.endswith("repetition_kernels")
        assert (repetition_numba.char_rep_ratios(texts, 2).tolist(), repetition_numba.count_words(texts),
                repetition_numba.text_word_rep_ratios(texts, 2)) == want


def test_filters_and_simhash_import_no_numba(tmp_path):
    code = ("import sys\n"
            "from data_juicer.ops import OPERATORS\n"
            "texts = ['Some words here and there, ok. ' * 9, 'abcabcabc ' * 30, 'a b', 'x y z ' * 40]\n"
            "stats = []\n"
            "for name, kw in [('words_num_filter', {}), ('alphanumeric_filter', {}),\n"
            "                 ('character_repetition_filter', {}), ('word_repetition_filter', {'rep_len': 2}),\n"
            "                 ('special_characters_filter', {})]:\n"
            "    op = OPERATORS.get(name)(**kw)\n"
            "    s = op.compute_stats_batched({'text': texts, '__dj__stats__': [{} for _ in texts]})\n"
            "    stats.append(s['__dj__stats__'][1])\n"
            "op = OPERATORS.get('document_simhash_deduplicator')(tokenization='space', window_size=2)\n"
            "h = op.compute_hash({'text': texts})['__dj__simhash']\n"
            "print(len(h), len(stats), 'numba' in sys.modules, 'llvmlite' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["4", "5", "False", "False"]
