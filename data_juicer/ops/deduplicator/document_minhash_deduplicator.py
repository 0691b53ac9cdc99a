import os
from typing import Annotated, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import regex
from loguru import logger
from pydantic import Field, PositiveInt

from data_juicer.models.loader import ensure_installed, load_sentencepiece, resolve_model_file
from data_juicer.ops.base import Deduplicator
from data_juicer.ops.common import minhash_c, minhash_numba
from data_juicer.ops.common.mapped_pages import MappedPages as _MappedPages
from data_juicer.ops.common.minhash import MAX_HASH, optimal_lsh_params, permutations, shingle_hashes, signatures
from data_juicer.ops.common.shingles import TOKENIZATIONS, punctuation_tokens, shingles, space_tokens
from data_juicer.ops.common.union_find import first_duplicates, min_component_labels
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import HashKeys
from data_juicer.utils.memory import release_freed_memory

# ``simplify``: numbers, and runs of punctuation / symbols / white space
_NUMBERS = regex.compile(r"\p{Nd}+(?:[.,]\p{Nd}+)?")
_SEPARATORS = regex.compile(r"[\p{P}\p{S}\s]+")


@OPERATORS.register_module("document_minhash_deduplicator")
class DocumentMinhashDeduplicator(Deduplicator):
    """Removes near-duplicate documents with MinHash LSH.

    Each text (lower-cased if ``lowercase``, without ``ignore_pattern`` matches) is cut into shingles of
    ``window_size`` tokens, and its MinHash signature over ``num_permutations`` permutations goes
    into ``__dj__minhash``. The signature is split into ``num_bands`` bands of
    ``num_rows_per_band`` values; documents equal in any band are candidates, and candidates are
    joined transitively into clusters. Only the first document of each cluster is kept, in the
    original order; the hash column is removed. Documents with fewer than ``window_size`` tokens
    all share one signature, so they are duplicates of each other. Same signatures, bands and
    kept samples as Data-Juicer 1.6.1. When ``numba`` is installed, signatures come from a
    compiled kernel (SHA-1 and permutations in one pass, no shingle sets; the same values), whose
    SHA-1 blocks go to OpenSSL's ``SHA1_Transform`` (the libcrypto ``hashlib`` uses, with the
    CPU's SHA instructions) when it loads and agrees with ``hashlib``: about 7x the numpy path. For
    ``space`` tokenization the same kernel comes from a small C library built once per machine with
    its C compiler (``minhash_c``; same values, no numba: numba's LLVM costs a process ~130 MB), when
    there is one.

    ``short_texts`` (ours, not in Data-Juicer; its default is Data-Juicer's behaviour) changes
    only what happens to texts with fewer than ``window_size`` tokens: with ``whole`` such a
    text is one shingle of all its tokens, so it is a duplicate only of texts with the same
    tokens; with ``keep`` it is never removed (as datatrove does). Either avoids removing every
    short text but one as a single cluster. ``simplify`` (ours, off by default) normalises texts
    before tokenizing, close to datatrove's ``simplify_text``: runs of digits become ``0``, runs
    of punctuation, symbols and white space (line breaks included) one space, so copies that
    differ in punctuation or line breaks share more shingles. See benchmarks/peers/README.md for
    the effect of both on precision and recall.
    """

    # parameters of ours beyond Data-Juicer's (their defaults keep Data-Juicer's output)
    extension_params = ("short_texts", "simplify")
    SHORT_TEXTS = ("shared", "whole", "keep")

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        return ("sentencepiece",) if params.get("tokenization") == "sentencepiece" else ()

    def __init__(
        self,
        tokenization: str = "space",
        window_size: PositiveInt = 5,
        lowercase: bool = True,
        ignore_pattern: Optional[str] = None,
        num_permutations: PositiveInt = 256,
        jaccard_threshold: Annotated[float, Field(ge=0, le=1)] = 0.7,
        num_bands: Optional[PositiveInt] = None,
        num_rows_per_band: Optional[PositiveInt] = None,
        tokenizer_model: Optional[str] = None,
        short_texts: str = "shared",
        simplify: bool = False,
        **kwargs,
    ):
        """
        :param tokenization: how texts are cut into tokens: ``space`` (words between spaces),
            ``punctuation`` (pieces between punctuation marks), ``character``, or
            ``sentencepiece`` (pieces of the model ``tokenizer_model``); ``character`` suits
            Chinese-like languages, ``sentencepiece`` mixed languages
        :param window_size: tokens per shingle
        :param lowercase: lower-case texts before shingling
        :param ignore_pattern: regular expression whose matches are removed before shingling
            (with ``punctuation`` tokenization it should not match punctuation)
        :param num_permutations: number of MinHash permutations
        :param jaccard_threshold: Jaccard similarity from which two texts count as near
            duplicates; used to choose the bands when they are not given
        :param num_bands: number of LSH bands; when this or ``num_rows_per_band`` is not
            given, both are chosen to minimise the false positive and negative rates at
            ``jaccard_threshold``
        :param num_rows_per_band: signature values per LSH band
        :param tokenizer_model: sentencepiece model file (path, or name of a file in the
            models folder) for ``sentencepiece`` tokenization
        :param short_texts: texts with fewer than ``window_size`` tokens: ``shared`` (default,
            as Data-Juicer: they have no shingles and share one signature, so all of them are
            one cluster), ``whole`` (such a text is a single shingle of all its tokens, so only
            texts with the same tokens are duplicates; empty texts still share one signature),
            or ``keep`` (they are never removed). Ours, not a Data-Juicer parameter.
        :param simplify: before tokenizing (after ``lowercase`` and ``ignore_pattern``), replace
            runs of digits (with a decimal part) by ``0`` and runs of punctuation, symbols and
            white space by one space, and strip the ends (close to datatrove's
            ``simplify_text``; diacritics are kept). Ours, not a Data-Juicer parameter.
        """
        super().__init__(**kwargs)
        if short_texts not in self.SHORT_TEXTS:
            raise ValueError(f"{self.name}: unknown short_texts '{short_texts}'; "
                             f"use one of {', '.join(self.SHORT_TEXTS)}")
        self.short_texts = short_texts
        self.simplify = simplify
        if tokenization not in TOKENIZATIONS:
            raise ValueError(f"{self.name}: unknown tokenization '{tokenization}'; "
                             f"use one of {', '.join(TOKENIZATIONS)}")
        self.tokenization = tokenization
        self.window_size = window_size
        self.lowercase = lowercase
        self.ignore_pattern = ignore_pattern
        self._ignore = regex.compile(ignore_pattern) if ignore_pattern else None
        if ignore_pattern and tokenization == "punctuation":
            logger.warning(f"{self.name}: with punctuation tokenization, an ignore_pattern that matches "
                           "punctuation changes the tokens")
        self.tokenizer_model = tokenizer_model
        self._sp_path = None
        if tokenization == "sentencepiece":
            if tokenizer_model is None:
                raise ValueError(f"{self.name}: tokenization 'sentencepiece' needs `tokenizer_model` "
                                 "(path or name of a sentencepiece model file)")
            self.requires = ("sentencepiece",)
            ensure_installed(self.requires, self.name)
            self._sp_path = resolve_model_file(
                tokenizer_model, tokenizer_model if os.path.exists(tokenizer_model) else None, self.name,
                path_param="tokenizer_model", what="sentencepiece model")
        self.num_permutations = num_permutations
        self.jaccard_threshold = jaccard_threshold
        if num_bands is None or num_rows_per_band is None:
            num_bands, num_rows_per_band = optimal_lsh_params(jaccard_threshold, num_permutations)
        self.num_bands = num_bands
        self.num_rows_per_band = num_rows_per_band
        # signature values the bands read (bands past the end of the signature are empty)
        self._width = min(num_permutations, num_bands * num_rows_per_band)
        self._perm_a, self._perm_b = (p[:self._width] for p in permutations(num_permutations))
        # the C library (loaded by _c_kernels, built on this machine's first run) needs no numba; numba's
        # kernels are loaded now, so worker processes forked later share them
        if not self._c_kernels() and minhash_numba.available():
            minhash_numba.warm_up(self._perm_a, self._perm_b)

    def _c_kernels(self) -> bool:
        """Signatures from ``minhash_c`` (``space`` tokenization, a C compiler here), not numba's kernels."""
        return self.tokenization == "space" and minhash_c.available()

    def _buffer_signatures(self, data: np.ndarray, off: np.ndarray, window: int) -> np.ndarray:
        """Signatures of the UTF-8 texts ``data[off[d]:off[d + 1]]`` by the compiled kernels in use."""
        if self._c_kernels():
            return minhash_c.buffer_signatures(data, off, window, self._perm_a, self._perm_b)
        return minhash_numba.buffer_signatures(data, off, self.tokenization, window, self._perm_a, self._perm_b)

    def _lower_kernels(self):
        """The module whose ``lower_buffer`` lower-cases raw text (``minhash_c`` or numba's), or None."""
        if self._c_kernels():
            return minhash_c
        return minhash_numba if minhash_numba.available() else None

    def _prepared(self, texts: list[str]) -> list:
        """Texts lower-cased and without ignored matches; sentencepiece pieces for that tokenization."""
        if self.lowercase:
            texts = [t.lower() for t in texts]
        if self._ignore is not None:
            texts = [self._ignore.sub("", t) for t in texts]
        if self.simplify:
            texts = [_SEPARATORS.sub(" ", _NUMBERS.sub("0", t)).strip(" ") for t in texts]
        if self.tokenization == "sentencepiece":
            texts = load_sentencepiece("", self._sp_path, self.name).encode(texts, out_type=str, num_threads=1)
        return texts

    def _shingle_sets(self, texts: list[str]) -> list[set]:
        return [set(shingles(t, self.tokenization, self.window_size)) for t in self._prepared(texts)]

    def _signatures(self, texts: list[str]) -> np.ndarray:
        prepared = self._prepared(texts)
        if self._c_kernels():
            sig = minhash_c.text_signatures(prepared, self.window_size, self._perm_a, self._perm_b)
        elif minhash_numba.available():  # compiled: one pass, no shingle sets (same values)
            a, b, window = self._perm_a, self._perm_b, self.window_size
            if self.tokenization in ("space", "character"):
                sig = minhash_numba.text_signatures(prepared, self.tokenization, window, a, b)
            elif self.tokenization == "punctuation":
                sig = minhash_numba.token_signatures([punctuation_tokens(t) for t in prepared], " ", window, a, b)
            else:
                sig = minhash_numba.token_signatures(prepared, "", window, a, b)
        else:
            sets = [set(shingles(t, self.tokenization, self.window_size)) for t in prepared]
            sig = signatures([shingle_hashes(s) for s in sets], self._perm_a, self._perm_b)
        if self.short_texts == "whole":
            self._sign_short_texts_whole(prepared, sig)
        return sig

    def _arrow_signatures(self, arr) -> np.ndarray:
        """``_signatures`` of a string array's texts (same values). Without ``ignore_pattern`` and
        ``simplify`` and on the compiled path for ``space`` / ``character`` tokenization, the kernels
        read the array's UTF-8 buffer as it is, or (``lowercase``) a copy lower-cased by
        ``minhash_numba.lower_buffer``, which gives Python's ``str.lower`` bytes (Arrow's
        ``utf8_lower`` differs on a few characters) without holding the GIL; otherwise the texts go
        through ``_signatures``."""
        if isinstance(arr, pa.ChunkedArray):  # a batch within one chunk is read in place, not copied
            arr = arr.chunk(0) if arr.num_chunks == 1 else arr.combine_chunks()
        raw = (self._ignore is None and not self.simplify
               and (self._c_kernels() or (self.tokenization in ("space", "character") and minhash_numba.available())))
        if not raw or arr.null_count or not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            return self._signatures(arr.to_pylist())
        n = len(arr)
        offsets_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
        bufs = arr.buffers()
        off = (np.frombuffer(bufs[1], dtype=offsets_type)[arr.offset:arr.offset + n + 1].astype(np.int64)
               if n else np.zeros(1, dtype=np.int64))
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size else \
            np.zeros(1, dtype=np.uint8)
        if self.lowercase:  # Python's str.lower, in the kernel (no GIL, no Python strings)
            data, off = self._lower_kernels().lower_buffer(data, off)
        sig = self._buffer_signatures(data, off, self.window_size)
        if self.short_texts == "whole":
            self._sign_short_buffers_whole(data, off, sig)
        return sig

    def hash_table(self, table: pa.Table, num_threads: int = 1, batch_rows: Optional[int] = None,
                   indices=None, release_pages: bool = True) -> dict:
        """The hash column ``compute_hash`` would add, for a whole Arrow table (or one holding just the
        text column), as ``{"__dj__minhash": ChunkedArray}``; the same values. With ``indices`` (e.g. a
        dataset's indices mapping), the rows ``table[indices]`` in that order, taken batch by batch.
        Batches of ``batch_rows`` rows (default ``batch_size``, at most 256: less text in flight for the
        same CPU; on 50k docs +40 instead of +56 MB anonymous at the peak) are signed in ``num_threads``
        threads of this process (the compiled kernels release the GIL), so there are no worker processes and no
        copy of the table: only each running batch's text and the signatures
        (``4 * min(num_permutations, bands * rows)`` bytes a row) are held. With ``release_pages``, when
        the text column lies in a read-only memory-mapped file (a dataset's Arrow cache file), each signed
        batch's pages are handed back (``madvise(MADV_DONTNEED)``): the file stays in the page cache, the
        process's resident / proportional set does not grow with the text read (see ``_MappedPages``)."""
        from concurrent.futures import ThreadPoolExecutor

        col = table.column(self.text_key)
        if indices is not None:
            indices = np.asarray(indices, dtype=np.int64)
        n, step = len(col) if indices is None else len(indices), max(1, batch_rows or min(self.batch_size, 256))
        width = self._width

        release = _MappedPages(col) if indices is None and release_pages else None

        def one(start: int) -> pa.Array:
            part = col.slice(start, min(step, n - start)) if indices is None else \
                col.take(pa.array(indices[start:start + step]))
            sig = self._arrow_signatures(part)
            if release is not None:
                release.drop(part)
            offsets = np.arange(0, (len(sig) + 1) * width * 4, width * 4, dtype=np.int32)
            return pa.Array.from_buffers(pa.binary(), len(sig), [None, pa.py_buffer(offsets),
                                                                 pa.py_buffer(sig.astype("<u4", copy=False))])

        starts = range(0, n, step)
        kernels = self._lower_kernels()
        if self.lowercase and kernels is not None:  # its table (and kernel), once, before the threads
            kernels.lower_buffer(np.zeros(1, dtype=np.uint8), np.zeros(2, dtype=np.int64))
        spill = n * width * 4 > SPILL_BYTES
        with ThreadPoolExecutor(max_workers=max(1, num_threads)) as pool:
            chunks = pool.map(one, starts) if num_threads > 1 and len(starts) > 1 else map(one, starts)
            column = _spilled(chunks) if spill else pa.chunked_array(list(chunks), type=pa.binary())
        release_freed_memory()  # the batches' buffers (50k docs, 2 threads: +15 -> +6-8 MB anonymous after)
        return {HashKeys.minhash: column}

    def _num_tokens(self, prepared) -> int:
        if self.tokenization == "space":
            return len(space_tokens(prepared))
        if self.tokenization == "punctuation":
            return len(punctuation_tokens(prepared))
        return len(prepared)  # characters, or sentencepiece pieces

    def _sign_short_texts_whole(self, prepared: list, sig: np.ndarray) -> None:
        """``short_texts: whole``: give each text with 1 to ``window_size - 1`` tokens (its
        signature has no shingle: all values are the maximum) the signature of one shingle made
        of all its tokens, in place."""
        for i in np.flatnonzero((sig == MAX_HASH).all(axis=1)).tolist():
            n = self._num_tokens(prepared[i])
            if 0 < n < self.window_size:
                whole = shingles(prepared[i], self.tokenization, n)
                sig[i] = signatures([shingle_hashes(whole)], self._perm_a, self._perm_b)[0]

    def _sign_short_buffers_whole(self, data: np.ndarray, off: np.ndarray, sig: np.ndarray) -> None:
        """``_sign_short_texts_whole`` of prepared UTF-8 texts ``data[off[d]:off[d + 1]]`` (``space`` or
        ``character`` tokenization, compiled path), in the kernels: a text of ``n`` tokens, ``0 < n <
        window_size``, has exactly one shingle of window ``n``, all its tokens (no Python strings)."""
        short = np.flatnonzero((sig == MAX_HASH).all(axis=1))
        if not len(short):
            return
        sizes = off[short + 1] - off[short]
        sub_off = np.zeros(len(short) + 1, dtype=np.int64)
        np.cumsum(sizes, out=sub_off[1:])
        sub = np.concatenate([data[off[d]:off[d + 1]] for d in short.tolist()]) if sub_off[-1] else \
            np.zeros(1, dtype=np.uint8)
        if self._c_kernels():
            counts = minhash_c.space_counts(sub, sub_off)
        else:
            space_tokens_k, char_tokens_k, _ = minhash_numba._kernels()
            _, _, doc_tok = (space_tokens_k if self.tokenization == "space" else char_tokens_k)(sub, sub_off)
            counts = np.diff(doc_tok)
        for n in range(1, self.window_size):
            rows = counts == n
            if rows.any():
                whole = self._buffer_signatures(sub, sub_off, n)
                sig[short[rows]] = whole[rows]

    def hash_inputs(self):
        return [self.text_key]

    def compute_hash(self, samples):
        if HashKeys.minhash in samples:
            return samples
        sig = self._signatures(samples[self.text_key])
        size = sig.shape[1] * 4
        raw = sig.astype("<u4", copy=False).tobytes()
        samples[HashKeys.minhash] = [raw[i:i + size] for i in range(0, len(raw), size)]
        return samples

    def _signature_matrix(self, dataset) -> "_Signatures":
        """The signatures as zero-copy views over the column's Arrow chunks (memory-mapped when the
        dataset is on disk): bands are copied out one at a time, so memory does not hold all signatures."""
        reader = getattr(dataset, "arrow_column_rows", None)
        col, rows = reader(HashKeys.minhash) if reader else (dataset.arrow_column(HashKeys.minhash), None)
        width = self._width
        views = []
        for chunk in col.chunks:  # chunk by chunk: all signatures may pass binary's 2 GiB offsets
            n = len(chunk)
            if not n:
                continue
            lengths = pc.min_max(pc.binary_length(chunk)).as_py()
            if chunk.null_count or lengths != {"min": width * 4, "max": width * 4}:
                raise ValueError(f"{self.name}: column {HashKeys.minhash} does not hold {width}-value signatures "
                                 "from this op's parameters; drop it and hash again")
            offset_type = np.int64 if pa.types.is_large_binary(chunk.type) else np.int32
            offsets = np.frombuffer(chunk.buffers()[1], dtype=offset_type)[chunk.offset:chunk.offset + n + 1]
            data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
            views.append(data.view("<u4").reshape(n, width))
        return _Signatures(views, width, rows)

    def _band_edges(self, sig: np.ndarray):
        """(later, first) index pairs of documents equal in some band (with ``short_texts: keep``,
        none that touches a document without shingles)."""
        pairs = list(self._edges_by_band(sig))
        if not pairs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])

    def _edges_by_band(self, sig):
        """``_band_edges``, one band at a time: the band's (later, first) pairs, each later document
        paired with the first document of its bucket."""
        n = len(sig)
        alone = None
        if self.short_texts == "keep":
            alone = sig.without_shingles() if isinstance(sig, _Signatures) else (sig == MAX_HASH).all(axis=1)
            if not alone.any():
                alone = None
        for band in range(self.num_bands):
            lo = band * self.num_rows_per_band
            hi = min(lo + self.num_rows_per_band, sig.shape[1])
            if lo >= hi:  # an empty band: every document falls in the same bucket
                later, first = np.arange(1, n, dtype=np.int64), np.zeros(max(n - 1, 0), dtype=np.int64)
            else:
                later, first = _band_pairs(sig, lo, hi)
            if alone is not None:
                ok = ~(alone[later] | alone[first])
                later, first = later[ok], first[ok]
            yield later, first

    def _labels(self, sig) -> np.ndarray:
        """Each document's cluster label (the cluster's first document). Bands are joined one at a
        time: the clusters so far (each member paired with its label) plus the next band's pairs, so
        no more than about two pairs per document are held at once, whatever the number of bands."""
        n = len(sig)
        labels = np.arange(n, dtype=np.int64)
        for later, first in self._edges_by_band(sig):
            if not len(later):
                continue
            members = np.flatnonzero(labels != np.arange(n))
            labels = min_component_labels(n, np.concatenate([members, later]),
                                           np.concatenate([labels[members], first]))
            del members, later, first
        return labels

    def process(self, dataset, show_num: int = 0):
        """Keep the first document of each cluster of near duplicates; also return up to
        ``show_num`` clusters, in order of their first duplicate, each as
        ``{first index: [first sample, first duplicate]}``, for the tracer."""
        n = len(dataset)
        if n <= 1:
            return dataset.remove_columns([HashKeys.minhash]), {}
        labels = self._labels(self._signature_matrix(dataset))
        keep = np.flatnonzero(labels == np.arange(n))
        logger.info(f"{self.name}: {n - len(keep)} near duplicates in {n} samples")
        dataset = dataset.remove_columns([HashKeys.minhash])
        pairs = {root: dataset.rows([root, dup]) for root, dup in first_duplicates(labels, show_num)}
        return (dataset if len(keep) == n else dataset.select(keep)), pairs


# ``hash_table``: signatures of more than this many bytes go to a temporary Arrow file, memory-mapped
# back (page cache, not the process's own memory), so the memory a run holds does not grow with its rows;
# from 4 MiB (~9,400 rows at 112 values): at 50k rows the run's anonymous memory is then ~20 MB lower from
# the hashing to the end (the in-memory column's 22 MB stayed with the allocator through the export)
SPILL_BYTES = 4 << 20


def _spilled(chunks) -> pa.ChunkedArray:
    """The binary arrays ``chunks`` (an iterator, consumed in order) as one column of a temporary
    Arrow file, memory-mapped; the file is unlinked at once (the mapping keeps it until released)."""
    import tempfile

    fd, path = tempfile.mkstemp(prefix="dj-minhash-", suffix=".arrow")
    os.close(fd)
    try:
        schema = pa.schema([(HashKeys.minhash, pa.binary())])
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
            for chunk in chunks:
                writer.write_batch(pa.record_batch([chunk], schema=schema))
        column = pa.ipc.open_file(pa.memory_map(path, "r")).read_all().column(0)
    finally:
        os.unlink(path)
    return column


_MIX = np.uint64(0x9E3779B97F4A7C15)


def _column(sig, c: int) -> np.ndarray:
    """Signature value ``c`` of every row, as a contiguous uint32 array."""
    return np.ascontiguousarray(sig[:, c:c + 1]).reshape(-1)


def _band_pairs(sig, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """For one band (signature values ``lo:hi``): each row whose band values equal an earlier row's,
    paired with the first such row: ``(later, first)``, the same pairs as ``_band_heads`` gives, in
    another order.

    Rows are grouped on a 64-bit mix of their values, built one value at a time (the band is never
    copied out); after a stable sort each group's first entry is its smallest row, so the pairs come
    from the sorted order alone. About 25 bytes a row at the peak. Each pair is then checked on the
    values themselves; if some 64-bit key collides between different values the band falls back to
    exact grouping."""
    n = len(sig)
    key = np.zeros(n, dtype=np.uint64)
    tmp = np.empty(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for c in range(lo, hi):
            np.bitwise_xor(key, _column(sig, c), out=key)
            np.multiply(key, _MIX, out=key)
            np.right_shift(key, np.uint64(29), out=tmp)
            np.bitwise_xor(key, tmp, out=key)
    order = np.argsort(key, kind="stable")
    np.take(key, order, out=tmp)
    del key
    same = np.empty(n, dtype=bool)  # sorted entry i has the key of entry i - 1
    if n:
        same[0] = False
        np.equal(tmp[1:], tmp[:-1], out=same[1:])
    del tmp
    start = np.arange(n, dtype=np.int64)  # for each sorted entry, where its group starts
    start[same] = 0
    np.maximum.accumulate(start, out=start)
    later = order[same]
    first = order[start[same]]
    del order, start, same
    for c in range(lo, hi):  # a 64-bit collision between different values: exact grouping
        col = _column(sig, c)
        if (col[later] != col[first]).any():
            head = _band_heads_exact(np.ascontiguousarray(sig[:, lo:hi]))
            later = np.flatnonzero(head != np.arange(n))
            return later, head[later]
    return later, first


def _band_heads(values: np.ndarray) -> np.ndarray:
    """For each row of one band's ``(n, rows)`` values, the first row with the same values.

    Rows are grouped on a 64-bit mix of their values (numpy only: little memory, freed at once),
    then each row is checked against its group's first row; only if some 64-bit key collides
    between different values does the band fall back to grouping on the exact bytes."""
    n = len(values)
    key = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(values.shape[1]):
            key ^= values[:, j].astype(np.uint64)
            key *= _MIX
            key ^= key >> np.uint64(29)
    order = np.argsort(key, kind="stable")  # stable: each group's first entry is its smallest row
    sorted_key = key[order]
    del key
    starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
    del sorted_key
    sizes = np.diff(np.r_[starts, n])
    head = np.empty(n, dtype=np.int64)
    head[order] = np.repeat(order[starts], sizes)
    del order, starts, sizes
    if (values != values[head]).any():  # a 64-bit collision between different values: exact grouping
        return _band_heads_exact(values)
    return head


def _band_heads_exact(values: np.ndarray) -> np.ndarray:
    n = len(values)
    keys = pa.Array.from_buffers(pa.binary(values.itemsize * values.shape[1]), n, [None, pa.py_buffer(values)])
    # bucket numbers in order of first appearance, so a bucket's first document is where
    # the running maximum of the numbers grows
    codes = pc.dictionary_encode(keys).indices.to_numpy()
    seen = np.maximum.accumulate(codes)
    first_of = np.flatnonzero(np.r_[True, seen[1:] > seen[:-1]])
    return first_of[codes]


class _Signatures:
    """An (n, width) uint32 signature matrix kept as row blocks; ``sig[:, lo:hi]`` copies out one band."""

    def __init__(self, blocks: list, width: int, rows: Optional[np.ndarray] = None):
        """``rows``: the stored rows the dataset holds, in order (a pending row selection), read
        through band by band instead of copying all the signatures out at once; None: all rows."""
        self.blocks = blocks
        self.rows = None if rows is None else np.asarray(rows, dtype=np.int64)
        self.shape = (sum(len(b) for b in blocks) if rows is None else len(rows), width)

    def __len__(self) -> int:
        return self.shape[0]

    def _gather(self, fn, width: int, dtype) -> np.ndarray:
        """``fn(block, rows)`` (``rows``: a slice or an index array into the block) for the dataset's rows,
        in order: ``(n, width)``, or ``(n,)`` when ``width`` is 0."""
        shape = (self.shape[0],) if width == 0 else (self.shape[0], width)
        if self.rows is None:
            if not self.blocks:
                return np.empty(shape, dtype=dtype)
            return np.concatenate([fn(b, slice(None)) for b in self.blocks])
        out = np.empty(shape, dtype=dtype)
        for i, sel, local in self._parts():
            out[sel] = fn(self.blocks[i], local)
        return out

    def _parts(self) -> list:
        """Per block holding some of ``rows``: (block, positions in ``rows``, rows within the block),
        found once (every band reads through them; int32 where the counts allow: 8 bytes a row)."""
        if getattr(self, "_cached_parts", None) is None:
            starts = np.cumsum([0] + [len(b) for b in self.blocks])
            which = np.searchsorted(starts, self.rows, side="right") - 1
            small = np.int32 if max(len(self.rows), int(starts[-1])) < 2**31 else np.int64
            order = np.argsort(which, kind="stable")
            bounds = np.searchsorted(which[order], np.arange(len(self.blocks) + 1))
            parts = []
            for i in range(len(self.blocks)):
                sel = order[bounds[i]:bounds[i + 1]]
                if len(sel):
                    parts.append((i, sel.astype(small), (self.rows[sel] - starts[i]).astype(small)))
            del which, order
            self._cached_parts = parts
        return self._cached_parts

    def without_shingles(self) -> np.ndarray:
        """Per row, whether its signature is all maxima (a text without shingles)."""
        step = 1 << 16  # through a row selection, whole signatures are copied out this many at a time

        def alone(b, rows):
            if isinstance(rows, slice):
                return (b == MAX_HASH).all(axis=1)
            return np.concatenate([(b[rows[i:i + step]] == MAX_HASH).all(axis=1) for i in range(0, len(rows), step)]
                                  or [np.zeros(0, dtype=bool)])

        return self._gather(alone, 0, bool)

    def __getitem__(self, key):
        rows, cols = key
        if rows != slice(None):
            raise IndexError("only whole columns of signatures can be taken")
        return self._gather(lambda b, r: b[r, cols], len(range(*cols.indices(self.shape[1]))), np.uint32)
