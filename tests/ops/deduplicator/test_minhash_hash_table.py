"""document_minhash_deduplicator: ``hash_table`` (signatures of an Arrow table in threads), clusters joined
band by band, and signatures read through a pending row selection (``arrow_column_rows``)."""
import numpy as np
import pyarrow as pa
import pytest

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from data_juicer.ops.common import minhash_numba
from data_juicer.ops.common.minhash import shingle_hashes, signatures
from data_juicer.ops.common.shingles import shingles
from data_juicer.utils.constant import HashKeys

BASE = "the quick brown fox jumps over the lazy dog and then runs far away into the dark green forest"
TEXTS = [
    BASE,  # 0
    "Ünïcode wörds: ΣΊΣΥΦΟΣ straße İstanbul " + BASE,  # 1: non-ASCII (Python lower-casing, final sigma)
    BASE.upper(),  # 2: copy of 0 once lower-cased
    "a b c",  # 3: short
    "",  # 4: empty
    BASE.replace("lazy", "sleepy"),  # 5: near copy of 0
    "completely different words that share nothing with the others at all here",  # 6
    "a b c",  # 7: copy of 3
]
PARAMS = {"tokenization": "space", "window_size": 3, "num_permutations": 64, "num_bands": 16, "num_rows_per_band": 4}


def make(**kw):
    return OPERATORS.get("document_minhash_deduplicator")(**dict(PARAMS, **kw))


def by_compute_hash(op, texts, batch=3):
    raw = b"".join(b for s in range(0, len(texts), batch)
                   for b in op.compute_hash({"text": texts[s:s + batch]})[HashKeys.minhash])
    return np.frombuffer(raw, dtype="<u4").reshape(len(texts), -1)


def by_hash_table(op, table, **kw):
    col = op.hash_table(table, **kw)[HashKeys.minhash]
    assert col.type == pa.binary()
    return np.frombuffer(b"".join(v.as_py() for v in col), dtype="<u4").reshape(len(col), -1)


@pytest.mark.parametrize("kw", [{"short_texts": "whole"}, {}, {"lowercase": False},
                                {"lowercase": False, "short_texts": "whole"},
                                {"tokenization": "character", "window_size": 5},
                                {"tokenization": "punctuation"}, {"simplify": True}])
@pytest.mark.parametrize("threads", [1, 2])
def test_hash_table_gives_compute_hash_values(kw, threads):
    op = make(**kw)
    table = pa.table({"text": TEXTS, "id": list(range(len(TEXTS)))})
    want = by_compute_hash(op, TEXTS)
    assert np.array_equal(by_hash_table(op, table, num_threads=threads, batch_rows=3), want)
    # through a row order (a dataset's indices mapping), batch by batch
    order = [6, 0, 7, 2]
    assert np.array_equal(by_hash_table(op, table, num_threads=threads, batch_rows=3, indices=order), want[order])


def test_hash_table_large_string_chunks_and_empty():
    op = make(lowercase=False)
    want = by_compute_hash(op, TEXTS)
    chunked = pa.table({"text": pa.chunked_array([pa.array(TEXTS[:5], pa.large_string()),
                                                  pa.array(TEXTS[5:], pa.large_string())])})
    assert np.array_equal(by_hash_table(op, chunked, num_threads=2, batch_rows=4), want)
    assert len(op.hash_table(pa.table({"text": pa.array([], pa.string())}))[HashKeys.minhash]) == 0


def test_raw_path_reads_arrow_buffer_when_compiled():
    # with nothing to rewrite, the kernels read Arrow's buffer (a sliced array: offsets not from 0)
    op = make(lowercase=False)
    arr = pa.array(["x"] + TEXTS)[1:]
    if minhash_numba.available():
        assert np.array_equal(op._arrow_signatures(arr), op._signatures(TEXTS))
    # the empty text has no shingle: all maxima; "a b c" (3 words) has one
    sig = op._arrow_signatures(arr)
    assert (sig[4] == 0xFFFFFFFF).all() and not (sig[3] == 0xFFFFFFFF).all()


def kept_ids(op, ds):
    out, _ = op.process(ds)
    return out.column("id")


def test_kept_rows_with_hash_table_as_pending_hashes():
    op = make(short_texts="whole")
    table = pa.table({"text": TEXTS, "id": list(range(len(TEXTS)))})
    ds = DJDataset.from_table(table)
    extra = op.hash_table(table, num_threads=2, batch_rows=3)
    # 2 is 0 lower-cased; 1 (17 of its 22 shingles are 0's) and 5 (one word of 19 changed) near copies of 0;
    # 7 a copy of 3
    assert kept_ids(op, DJDataset(ds.hf, extra)) == [0, 3, 4, 6]
    assert kept_ids(op, ds.map_batches(op.compute_hash, batch_size=3)) == [0, 3, 4, 6]


def test_signatures_through_a_row_selection_same_as_flattened():
    op = make(short_texts="keep")
    rows = [{"text": t, "id": i} for i, t in enumerate(TEXTS * 3)]  # three copies of each text
    ds = DJDataset.from_rows(rows).map_batches(op.compute_hash, batch_size=5)
    pick = [20, 2, 5, 12, 0, 7, 15, 3, 4, 11]
    sel = ds.select(pick)  # an indices mapping over the hashed table
    flat = DJDataset.from_table(sel.arrow_table())
    # texts 4 2 5 4 0 7 7 3 4 3: empty texts are kept (``keep``), 5 and 0 go with 2, the "a b c"s with 7
    assert kept_ids(op, sel) == kept_ids(op, flat) == [20, 2, 12, 7, 4]


def test_labels_joined_band_by_band_equal_all_edges_at_once():
    from data_juicer.ops.common.union_find import min_component_labels

    op = make()
    rng = np.random.default_rng(0)
    # 300 rows of 64 values from 12 base rows, each copy with a few values changed: chains across bands
    base = rng.integers(0, 50, size=(12, 64), dtype=np.uint32)
    sig = base[rng.integers(0, 12, size=300)].copy()
    hits = rng.random(sig.shape) < 0.2
    sig[hits] = rng.integers(0, 50, size=hits.sum(), dtype=np.uint32)
    u, v = op._band_edges(sig)
    assert np.array_equal(op._labels(sig), min_component_labels(len(sig), u, v))
    assert op._labels(np.arange(8, dtype=np.uint32).reshape(2, 4).repeat(64 // 4, axis=1)).tolist() == [0, 1]


def test_hash_table_spills_large_columns_to_a_mapped_file(monkeypatch, tmp_path):
    import tempfile

    import data_juicer.ops.deduplicator.document_minhash_deduplicator as mod

    monkeypatch.setattr(mod, "SPILL_BYTES", 100)  # 8 rows x 64 values x 4 bytes = 2,048 bytes: spilled
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    op = make()
    table = pa.table({"text": TEXTS})
    col = op.hash_table(table, num_threads=2, batch_rows=3)[HashKeys.minhash]
    assert col.num_chunks == 3 and list(tmp_path.iterdir()) == []  # read back from the file, which is gone
    got = np.frombuffer(b"".join(v.as_py() for v in col), dtype="<u4").reshape(len(TEXTS), -1)
    assert np.array_equal(got, by_compute_hash(op, TEXTS))
    ds = DJDataset.from_table(pa.table({"text": TEXTS, "id": list(range(len(TEXTS)))}))
    assert kept_ids(make(short_texts="whole"), DJDataset(ds.hf, make(short_texts="whole").hash_table(table))) \
        == [0, 3, 4, 6]


def test_band_pairs_same_pairs_as_band_heads_and_exact_on_collisions(monkeypatch):
    import data_juicer.ops.deduplicator.document_minhash_deduplicator as mod

    values = np.array([[1, 2], [3, 4], [1, 2], [5, 6], [3, 4], [1, 2]], dtype=np.uint32)
    sig = np.hstack([np.zeros((6, 1), dtype=np.uint32), values])  # the band is values 1:3
    later, first = mod._band_pairs(sig, 1, 3)
    assert sorted(zip(later.tolist(), first.tolist())) == [(2, 0), (4, 1), (5, 0)]
    monkeypatch.setattr(mod, "_MIX", np.uint64(0))  # every key 0: one group, caught by the exact check
    later, first = mod._band_pairs(sig, 1, 3)
    assert sorted(zip(later.tolist(), first.tolist())) == [(2, 0), (4, 1), (5, 0)]
    assert [len(a) for a in mod._band_pairs(np.zeros((0, 3), dtype=np.uint32), 0, 2)] == [0, 0]


def _rss_of(address: int, size: int) -> int:
    """Resident bytes of [address, address + size) (mincore-free: /proc/self/smaps of the mapping holding it)."""
    with open("/proc/self/smaps", encoding="utf-8") as f:
        inside = False
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                inside = lo <= address < hi
            elif inside and head[0] == "Rss:":
                return int(head[1]) * 1024
    return -1


def test_signed_batches_of_a_mapped_file_are_released(tmp_path):
    from data_juicer.ops.common.mapped_pages import MappedPages as _MappedPages

    texts = [f"word{i % 97} other{i % 13} and some more words to sign here {i}" * 20 for i in range(3000)]
    path = str(tmp_path / "t.arrow")
    table = pa.table({"text": texts})
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    mapped = pa.ipc.open_file(pa.memory_map(path, "r")).read_all()
    op = make()
    want = by_hash_table(op, table, release_pages=False)  # in memory: never released (not a file mapping)
    data = mapped.column("text").chunks[0].buffers()[2]
    np.frombuffer(data, dtype=np.uint8).sum()  # touch every page
    before = _rss_of(data.address, data.size)
    got = by_hash_table(op, mapped, batch_rows=256, num_threads=2)
    after = _rss_of(data.address, data.size)
    assert (got == want).all()
    assert before > 2_000_000 and after < before // 4  # ~2.7 MB of text, handed back page by page
    assert by_hash_table(op, mapped).tolist() == want.tolist()  # read again from the page cache: same values
    assert not _MappedPages(table.column("text")).ranges  # heap memory: nothing to release
    assert _MappedPages(mapped.column("text")).ranges


@pytest.mark.parametrize("tokenization", ["space", "character"])
def test_short_texts_whole_in_kernels_gives_python_values(tokenization):
    # short texts (1 to window - 1 tokens) signed from the buffer: runs of spaces, non-ASCII, empty,
    # upper case lower-cased first, mixed with long texts, from a sliced array (offsets not from 0)
    texts = ["", "a", "  a  b  ", "Ünï cödé", "中文", "x y z w", "one two three four five six", " ", "ΑΒΓ δ",
             "abcdefgh"]
    op = make(tokenization=tokenization, short_texts="whole")
    arr = pa.array(["pad"] + texts)[1:]
    want = op._signatures(texts)
    assert np.array_equal(op._arrow_signatures(arr), want)
    sets = [set(shingles(t.lower(), tokenization, op.window_size)) for t in texts]
    ref = signatures([shingle_hashes(s) for s in sets], op._perm_a, op._perm_b)
    op._sign_short_texts_whole([t.lower() for t in texts], ref)  # the Python path over the texts
    assert np.array_equal(want, ref)
    assert not (want[1] == 0xFFFFFFFF).all() and (want[0] == 0xFFFFFFFF).all()
