"""Keep-the-first-of-each-key dedup over hash columns, shared by the image and video dedups.

Rows are keyed by one hash column, or by the pair (media hash, text hash) with
``consider_text``. A row whose media hash is empty (no media) is always kept when only the
media hash counts; with the text hash it is keyed like any other row (as Data-Juicer 1.6.1).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from data_juicer.utils.constant import HashKeys


def _codes(col: pa.Array) -> np.ndarray:
    return pc.dictionary_encode(col, null_encoding="encode").indices.to_numpy(zero_copy_only=False).astype(np.int64)


def first_of_each_key(dataset, media_key: str, consider_text: bool):
    """(kept row indices in order, key code per row or None, exempt mask) for the rows of ``dataset``."""
    media = dataset.arrow_column(media_key).combine_chunks()
    codes = _codes(media)
    if consider_text:
        text = _codes(dataset.arrow_column(HashKeys.hash).combine_chunks())
        codes = codes * (int(text.max()) + 1 if len(text) else 1) + text
        exempt = np.zeros(len(codes), dtype=bool)
    else:
        exempt = pc.equal(pc.utf8_length(media), 0).to_numpy(zero_copy_only=False)
    _, first = np.unique(codes, return_index=True)
    keep = np.zeros(len(codes), dtype=bool)
    keep[first] = True
    keep |= exempt
    return np.flatnonzero(keep), codes, exempt


def duplicate_pairs(dataset, codes: np.ndarray, exempt: np.ndarray, show_num: int, key_of) -> dict:
    """Up to ``show_num`` duplicated keys, most duplicated first (ties: first seen first), each
    with its first two rows; ``key_of(row)`` names a key."""
    live = np.flatnonzero(~exempt)
    if not len(live) or show_num <= 0:
        return {}
    uniq, first, counts = np.unique(codes[live], return_index=True, return_counts=True)
    order = np.lexsort((first, -counts))
    pairs = {}
    for j in order[:show_num]:
        if counts[j] < 2:
            break
        rows = dataset.rows(live[np.flatnonzero(codes[live] == uniq[j])[:2]])
        pairs[key_of(rows[0])] = rows
    return pairs


def dedup_by_media_hash(dataset, media_key: str, consider_text: bool, show_num: int = 0):
    """Keep the first sample of each media hash (and text hash, with ``consider_text``); also return
    up to ``show_num`` duplicated hashes, most duplicated first, each with its first two samples."""
    n = len(dataset)
    if n <= 1:
        return dataset, {}
    keep, codes, exempt = first_of_each_key(dataset, media_key, consider_text)
    pairs = {}
    if show_num > 0:
        key_of = (lambda r: (r[media_key], r[HashKeys.hash])) if consider_text else (lambda r: r[media_key])
        pairs = duplicate_pairs(dataset, codes, exempt, show_num, key_of)
    return (dataset if len(keep) == n else dataset.select(np.asarray(keep))), pairs
