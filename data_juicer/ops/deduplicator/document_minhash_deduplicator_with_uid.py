import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from loguru import logger

from data_juicer.ops.common.union_find import first_duplicates, min_component_labels
from data_juicer.ops.deduplicator.document_minhash_deduplicator import DocumentMinhashDeduplicator
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import HashKeys


@OPERATORS.register_module("document_minhash_deduplicator_with_uid")
class DocumentMinhashDeduplicatorWithUid(DocumentMinhashDeduplicator):
    """Removes near-duplicate documents with MinHash LSH, keeping the smallest ``__dj__uid`` of
    each cluster instead of the first row.

    Signatures, bands and clusters are those of ``document_minhash_deduplicator``; the dataset
    must also hold an integer column ``__dj__uid`` with a unique value per sample. In each
    cluster of near duplicates only the sample with the smallest uid survives, wherever it
    stands; the others are removed and the order of the rest is kept. This makes incremental
    dedup possible: give an already deduplicated set A smaller uids than a new set B, and
    dedup A + B together; duplicates are resolved in favour of A. (Samples sharing one uid
    stand or fall together.) Same kept samples as Data-Juicer 1.6.1.
    """

    def _uids(self, dataset) -> np.ndarray:
        if HashKeys.uid not in dataset.column_names:
            raise ValueError(f"{self.name}: the dataset has no '{HashKeys.uid}' column; add a unique integer "
                             "uid to each sample, or use document_minhash_deduplicator")
        col = dataset.arrow_column(HashKeys.uid)
        if not pa.types.is_integer(col.type) or col.null_count:
            raise ValueError(f"{self.name}: column '{HashKeys.uid}' must hold integers (no nulls), got {col.type}")
        return pc.cast(col, pa.int64()).to_numpy()

    def process(self, dataset, show_num: int = 0):
        """Keep the smallest-uid document of each cluster of near duplicates; also return up
        to ``show_num`` clusters, in order of their first non-kept row, each as
        ``{kept row index: [kept sample, that duplicate]}``, for the tracer."""
        n = len(dataset)
        if n <= 1:
            return dataset.remove_columns([HashKeys.minhash]), {}
        uids = self._uids(dataset)
        # one node per distinct uid, numbered in uid order, so a cluster's smallest node is its smallest uid
        distinct, node = np.unique(uids, return_inverse=True)
        u, v = self._band_edges(self._signature_matrix(dataset))
        labels = min_component_labels(len(distinct), node[u], node[v])
        keep = np.flatnonzero(labels[node] == node)
        logger.info(f"{self.name}: {n - len(keep)} near duplicates in {n} samples")
        dataset = dataset.remove_columns([HashKeys.minhash])
        pairs = {}
        if show_num > 0:
            row_of_node = np.empty(len(distinct), dtype=np.int64)
            row_of_node[node] = np.arange(n)  # the last row of each uid
            roots = row_of_node[labels[node]]
            roots = np.where(labels[node] == node, np.arange(n), roots)  # kept rows are their own root
            pairs = {root: dataset.rows([root, dup]) for root, dup in first_duplicates(roots, show_num)}
        return (dataset if len(keep) == n else dataset.select(keep)), pairs
