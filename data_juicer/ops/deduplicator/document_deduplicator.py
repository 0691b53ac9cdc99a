import hashlib
import string
from typing import ClassVar

import numpy as np
import pyarrow.compute as pc

from data_juicer.ops.base import Deduplicator
from data_juicer.ops.common.hash_groups import first_rows, fixed_width_blocks
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import HashKeys

# Characters ``ignore_non_character`` removes, as data: the Unicode decimal digits (Unicode 16,
# as (first code point, count) runs), whitespace, and ASCII punctuation.
_DECIMAL_DIGIT_RUNS = (
    (0x30, 10), (0x660, 10), (0x6F0, 10), (0x7C0, 10), (0x966, 10), (0x9E6, 10), (0xA66, 10), (0xAE6, 10),
    (0xB66, 10), (0xBE6, 10), (0xC66, 10), (0xCE6, 10), (0xD66, 10), (0xDE6, 10), (0xE50, 10), (0xED0, 10),
    (0xF20, 10), (0x1040, 10), (0x1090, 10), (0x17E0, 10), (0x1810, 10), (0x1946, 10), (0x19D0, 10),
    (0x1A80, 10), (0x1A90, 10), (0x1B50, 10), (0x1BB0, 10), (0x1C40, 10), (0x1C50, 10), (0xA620, 10),
    (0xA8D0, 10), (0xA900, 10), (0xA9D0, 10), (0xA9F0, 10), (0xAA50, 10), (0xABF0, 10), (0xFF10, 10),
    (0x104A0, 10), (0x10D30, 10), (0x10D40, 10), (0x11066, 10), (0x110F0, 10), (0x11136, 10), (0x111D0, 10),
    (0x112F0, 10), (0x11450, 10), (0x114D0, 10), (0x11650, 10), (0x116C0, 10), (0x116D0, 20), (0x11730, 10),
    (0x118E0, 10), (0x11950, 10), (0x11BF0, 10), (0x11C50, 10), (0x11D50, 10), (0x11DA0, 10), (0x11DE0, 10),
    (0x11F50, 10), (0x16130, 10), (0x16A60, 10), (0x16AC0, 10), (0x16B50, 10), (0x16D70, 10), (0x1CCF0, 10),
    (0x1D7CE, 50), (0x1E140, 10), (0x1E2F0, 10), (0x1E4F0, 10), (0x1E5F1, 10), (0x1E950, 10), (0x1FBF0, 10),
)
# Unicode White_Space (the ASCII separators 0x1C-0x1F are not in it)
_WHITESPACE = (0x9, 0xA, 0xB, 0xC, 0xD, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F,
               0x205F, 0x3000)
_DIGITS = (cp for start, count in _DECIMAL_DIGIT_RUNS for cp in range(start, start + count))
_NON_CHARACTERS = {c: None for c in (*_DIGITS, *_WHITESPACE, *map(ord, string.punctuation))}


@OPERATORS.register_module("document_deduplicator")
class DocumentDeduplicator(Deduplicator):
    """Removes exact duplicate documents: the MD5 of each text (optionally lower-cased and with
    digits, whitespace and ASCII punctuation removed; then stripped) goes into ``__dj__hash``,
    and only the first sample of each hash is kept, in the original order."""

    def __init__(self, lowercase: bool = False, ignore_non_character: bool = False, **kwargs):
        """
        :param lowercase: compare texts case-insensitively (lower-case them before hashing)
        :param ignore_non_character: ignore digits, whitespace and punctuation when comparing
        """
        super().__init__(**kwargs)
        self.lowercase = lowercase
        self.ignore_non_character = ignore_non_character

    def _normalise(self, text: str) -> str:
        if self.lowercase:
            text = text.lower()
        if self.ignore_non_character:
            text = text.translate(_NON_CHARACTERS)
        return text.strip()

    # on Ray, from this many rows the hash sets are sharded over actors (``run_ray``); below it,
    # gathering the 32-byte hash column to the driver (``process`` on the facade) is cheaper
    ray_actor_min_rows: ClassVar[int] = 500_000

    def hash_inputs(self):
        return [self.text_key]

    def run_ray(self, ds):
        """Keep the first sample of each hash of a Ray ``Dataset``: hash sets sharded over actors."""
        if HashKeys.hash not in ds.schema().names or ds.count() < self.ray_actor_min_rows:
            return None
        from data_juicer.ops.common.ray_dedup import keep_first, shard_count

        return keep_first(ds, lambda t: t.column(HashKeys.hash).to_pylist(), shard_count("auto"))

    def compute_hash(self, samples):
        if HashKeys.hash in samples:
            return samples
        md5, norm = hashlib.md5, self._normalise
        samples[HashKeys.hash] = [md5(norm(t).encode("utf-8")).hexdigest() for t in samples[self.text_key]]
        return samples

    def process(self, dataset, show_num: int = 0):
        """Keep the first sample of each hash; also return up to ``show_num`` duplicated hashes
        (most duplicated first), each with its first two samples, for the tracer."""
        n = len(dataset)
        if n <= 1:
            return dataset, {}
        first, codes = self._first_rows(dataset.arrow_column(HashKeys.hash), show_num > 0)
        dup_pairs = self._duplicate_pairs(dataset, codes, first, show_num) if show_num > 0 else {}
        if len(first) == n:
            return dataset, dup_pairs
        return dataset.select(first), dup_pairs

    @staticmethod
    def _first_rows(hashes, want_codes: bool):
        """The first row of each distinct hash (ascending, i.e. in order of first appearance) and, if
        ``want_codes``, each row's hash number in that order. MD5 hex values (32 bytes each) are grouped
        where they lie (memory-mapped) on packed 64-bit keys sorted in place, checked exactly
        (``hash_groups.first_rows``: ~9 B a row at the peak, the kept rows as int32); other values
        through Arrow's dictionary (~390 B a row at the peak)."""
        blocks = fixed_width_blocks(hashes, 32)
        if blocks is not None:
            first, head = first_rows(blocks, want_head=want_codes)
            return first, (np.searchsorted(first, head) if want_codes else None)
        # codes number the distinct hashes in order of first appearance
        codes = pc.dictionary_encode(hashes.combine_chunks(), null_encoding="encode").indices.to_numpy(
            zero_copy_only=False)
        _, first = np.unique(codes, return_index=True)  # sorted by code = by first appearance
        return first, codes

    @staticmethod
    def _duplicate_pairs(dataset, codes: np.ndarray, first: np.ndarray, show_num: int) -> dict:
        counts = np.bincount(codes, minlength=len(first))
        # most duplicated first; equal counts in order of first appearance (stable sort)
        order = np.argsort(-counts, kind="stable")
        chosen = [c for c in order[:show_num] if counts[c] > 1]
        pairs = {}
        for code in chosen:
            rows = dataset.rows(np.flatnonzero(codes == code)[:2])
            pairs[rows[0][HashKeys.hash]] = rows
        return pairs
