import hashlib
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import regex
from loguru import logger
from pydantic import PositiveInt

from data_juicer.ops.base import Deduplicator
from data_juicer.ops.common import simhash_numba
from data_juicer.ops.common.shingles import shingles
from data_juicer.ops.common.simhash_pairs import first_of_each_value, near_pairs
from data_juicer.ops.common.union_find import first_duplicates, min_component_labels
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import HashKeys
from data_juicer.utils.lazy import require

_TOKENIZATIONS = ("space", "punctuation", "character")


@OPERATORS.register_module("document_simhash_deduplicator")
class DocumentSimhashDeduplicator(Deduplicator):
    """Removes near-duplicate documents with 64-bit SimHash.

    Each text (lower-cased if ``lowercase``, without ``ignore_pattern`` matches) is cut into shingles of
    ``window_size`` tokens; each shingle hashes to the first 8 bytes of its MD5, and the SimHash
    of the text (a decimal string in ``__dj__simhash``) sets each bit where more shingles have
    it set than not. Texts whose SimHashes differ in at most ``hamming_distance`` bits (looked up
    on ``num_blocks`` blocks of bits: the pairs of simhash-pybind's ``find_all``, found with numpy)
    are joined transitively into clusters, equal SimHashes included, and only the first text of each cluster is kept, in
    the original order. Same hashes and kept samples as Data-Juicer 1.6.1.
    """

    requires = ("simhash-pybind",)

    def __init__(
        self,
        tokenization: str = "space",
        window_size: PositiveInt = 6,
        lowercase: bool = True,
        ignore_pattern: str | None = None,
        num_blocks: PositiveInt = 6,
        hamming_distance: PositiveInt = 4,
        **kwargs,
    ):
        """
        :param tokenization: how texts are cut into tokens: ``space`` (words between spaces,
            for English-like languages), ``punctuation`` (pieces between punctuation marks) or
            ``character`` (for Chinese-like languages)
        :param window_size: tokens per shingle
        :param lowercase: lower-case texts before shingling
        :param ignore_pattern: regular expression whose matches are removed before shingling
            (with ``punctuation`` tokenization it should not match punctuation)
        :param num_blocks: blocks the 64 bits are split into to look up near SimHashes; more
            than ``hamming_distance`` and at most 64
        :param hamming_distance: largest number of differing bits between the SimHashes of two
            near-duplicate texts
        """
        super().__init__(**kwargs)
        if tokenization not in _TOKENIZATIONS:
            raise ValueError(f"{self.name}: unknown tokenization '{tokenization}'; "
                             f"use one of {', '.join(_TOKENIZATIONS)}")
        if not hamming_distance < num_blocks <= 64:
            raise ValueError(f"{self.name}: num_blocks ({num_blocks}) must be greater than hamming_distance "
                             f"({hamming_distance}) and at most 64")
        self.tokenization = tokenization
        self.window_size = window_size
        self.lowercase = lowercase
        self.ignore_pattern = ignore_pattern
        self._ignore = regex.compile(ignore_pattern) if ignore_pattern else None
        if ignore_pattern and tokenization == "punctuation":
            logger.warning(f"{self.name}: with punctuation tokenization, an ignore_pattern that matches "
                           "punctuation changes the tokens")
        self.num_blocks = num_blocks
        self.hamming_distance = hamming_distance
        # compiled path (the C library, else numba): same values; built or loaded here, once, so
        # forked workers share it
        self._compiled = tokenization == "space" and self._ignore is None and simhash_numba.available()

    def _simhash(self, text: str, compute) -> int:
        if self.lowercase:
            text = text.lower()
        if self._ignore is not None:
            text = self._ignore.sub("", text)
        counts = Counter(shingles(text, self.tokenization, self.window_size))  # hash each shingle once
        md5 = hashlib.md5
        digests = b"".join([md5(s).digest() for s in counts])
        hashes = np.frombuffer(digests, dtype=">u8")[::2]  # first 8 of each 16 bytes, big-endian
        return compute(np.repeat(hashes, np.fromiter(counts.values(), np.int64, len(counts))).tolist())

    def hash_inputs(self):
        return [self.text_key]

    def compute_hash(self, samples):
        if HashKeys.simhash in samples:
            return samples
        texts = samples[self.text_key]
        if getattr(self, "_compiled", False):
            prepared = [t.lower() for t in texts] if self.lowercase else texts
            samples[HashKeys.simhash] = [str(h) for h in simhash_numba.space_simhashes(prepared, self.window_size)
                                         .tolist()]
            return samples
        compute = require("simhash-pybind", who=self.name).compute
        samples[HashKeys.simhash] = [str(self._simhash(t, compute)) for t in texts]
        return samples

    def process(self, dataset, show_num: int = 0):
        """Keep the first document of each cluster of near duplicates; also return up to
        ``show_num`` clusters, in order of their first duplicate, each as
        ``{first index: [first sample, first duplicate]}``, for the tracer."""
        n = len(dataset)
        if n <= 1:
            return dataset, {}
        values = _uint64_column(dataset.arrow_column(HashKeys.simhash))
        # nodes: the distinct SimHashes in order of first appearance, so that the smallest node of a
        # cluster (its label) is the one whose first row is the cluster's first row
        first = first_of_each_value(values)
        distinct = values[first]
        by_row = values if show_num > 0 else None
        del values
        # the pairs simhash-pybind's find_all gives, found in numpy (packed keys sorted in place)
        u, v = near_pairs(distinct, self.num_blocks, self.hamming_distance)
        n_pairs, n_distinct = len(u), len(distinct)
        if by_row is None:
            del distinct
        labels = min_component_labels(n_distinct, u, v)
        del u, v
        heads = labels == np.arange(len(labels))
        keep = first[heads] if not heads.all() else first
        logger.info(f"{self.name}: {n_pairs} near pairs of SimHashes, {n - len(keep)} duplicates "
                    f"in {n} samples")
        dup_pairs = {}
        if show_num > 0:  # each row's cluster root (the tracer's pairs): per-row arrays, only here
            sorter = np.argsort(distinct)
            node = sorter[np.searchsorted(distinct, by_row, sorter=sorter)]
            roots = first[labels[node]].astype(np.int64)
            dup_pairs = {root: dataset.rows([root, dup]) for root, dup in first_duplicates(roots, show_num)}
        del labels, heads, first
        return (dataset if len(keep) == n else dataset.select(keep)), dup_pairs


def _uint64_column(col: pa.ChunkedArray) -> np.ndarray:
    """The decimal SimHash strings as uint64, cast a chunk at a time into one array (no concatenated copy)."""
    out = np.empty(len(col), dtype=np.uint64)
    at = 0
    for chunk in col.chunks:
        if len(chunk):
            out[at:at + len(chunk)] = pc.cast(chunk, pa.uint64()).to_numpy(zero_copy_only=False)
            at += len(chunk)
    return out
