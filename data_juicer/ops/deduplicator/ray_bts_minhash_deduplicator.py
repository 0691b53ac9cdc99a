from typing import Annotated, Optional, Union

import numpy as np
import pyarrow as pa
from pydantic import Field, PositiveInt

from data_juicer.ops.common.ray_dedup import ORDER_KEY, keep_cluster_roots, shard_count
from data_juicer.ops.deduplicator.document_minhash_deduplicator import DocumentMinhashDeduplicator
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import HashKeys


class _RayMinhashMixin:
    """``run_ray`` for the MinHash dedups: bucket tables sharded over Ray actors, then clusters."""

    order_key = ORDER_KEY

    def _band_keys(self, table: pa.Table) -> list[list[bytes]]:
        col = table.column(HashKeys.minhash).combine_chunks()
        n, width = len(col), self._width
        if n == 0:
            return []
        offsets = np.frombuffer(col.buffers()[1], dtype=np.int64 if pa.types.is_large_binary(col.type) else np.int32)
        data = np.frombuffer(col.buffers()[2], dtype=np.uint8)[offsets[col.offset]:offsets[col.offset + n]]
        sig = data.reshape(n, width * 4)
        out = []
        for band in range(self.num_bands):
            lo = band * self.num_rows_per_band * 4
            hi = min(lo + self.num_rows_per_band * 4, width * 4)
            prefix = band.to_bytes(4, "little")
            if lo >= hi:  # a band past the end of the signature: one bucket for all
                out.append([prefix] * n)
            else:
                part = np.ascontiguousarray(sig[:, lo:hi]).tobytes()
                size = hi - lo
                out.append([prefix + part[i:i + size] for i in range(0, len(part), size)])
        return out

    def _union_find_shards(self) -> int:
        return shard_count(self.union_find_parallel_num)

    def run_ray(self, ds):
        """Keep the first document (smallest order key) of each cluster of a Ray ``Dataset``
        whose signatures are already computed; the signature column is dropped."""
        kept = keep_cluster_roots(ds, self._band_keys, self.order_key, self._union_find_shards())
        return kept.drop_columns([HashKeys.minhash])


def _check_ray_params(name, union_find_parallel_num):
    shard_count(union_find_parallel_num, default_cpus=1)


@OPERATORS.register_module("ray_bts_minhash_deduplicator")
class RayBTSMinhashDeduplicator(_RayMinhashMixin, DocumentMinhashDeduplicator):
    """Removes near-duplicate documents with MinHash LSH on Ray.

    Signatures, bands and clusters are those of ``document_minhash_deduplicator`` (the same
    parameters give the same kept samples, on any cluster layout): signatures are computed in
    the workers; each band of each signature goes to bucket tables sharded over
    ``union_find_parallel_num`` Ray actors (by bucket, so no actor takes all the load), which
    return one edge per non-first bucket member; the edges are joined into clusters and all but
    the first document of each cluster (first in the input) are removed. On the default
    executor it runs as ``document_minhash_deduplicator``. The tuning parameters of
    Data-Juicer's BTS implementation are accepted and, except ``union_find_parallel_num``,
    have no effect here.
    """

    exec_modes = ("default", "ray", "ray_partitioned")

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
        union_find_parallel_num: Union[int, str] = "auto",
        union_threshold: Optional[int] = 256,
        max_pending_edge_buffer_task: Optional[int] = 20,
        num_edge_buffer_task_returns: Optional[int] = 10,
        max_pending_filter_tasks: Optional[int] = 20,
        num_filter_task_returns: Optional[int] = 10,
        merge_batch_size: Optional[int] = 1000,
        minhash_batch_size: Optional[Union[int, str]] = "auto",
        memory_per_sample: Optional[float] = 0.1,
        actor_memory: Optional[int] = None,
        task_memory: Optional[int] = None,
        **kwargs,
    ):
        """
        :param union_find_parallel_num: number of bucket-table actors, or ``auto`` (the cluster's
            CPUs, at most 16)
        :param union_threshold: accepted for compatibility (no effect)
        :param max_pending_edge_buffer_task: accepted for compatibility (no effect)
        :param num_edge_buffer_task_returns: accepted for compatibility (no effect)
        :param max_pending_filter_tasks: accepted for compatibility (no effect)
        :param num_filter_task_returns: accepted for compatibility (no effect)
        :param merge_batch_size: accepted for compatibility (no effect)
        :param minhash_batch_size: accepted for compatibility (signatures are computed in batches of ``batch_size``)
        :param memory_per_sample: accepted for compatibility (no effect)
        :param actor_memory: accepted for compatibility (no effect)
        :param task_memory: accepted for compatibility (no effect)
        """
        super().__init__(tokenization=tokenization, window_size=window_size, lowercase=lowercase,
                         ignore_pattern=ignore_pattern, num_permutations=num_permutations,
                         jaccard_threshold=jaccard_threshold, num_bands=num_bands, num_rows_per_band=num_rows_per_band,
                         tokenizer_model=tokenizer_model, **kwargs)
        _check_ray_params(self.name, union_find_parallel_num)
        self.union_find_parallel_num = union_find_parallel_num
        self.union_threshold = union_threshold
        self.max_pending_edge_buffer_task = max_pending_edge_buffer_task
        self.num_edge_buffer_task_returns = num_edge_buffer_task_returns
        self.max_pending_filter_tasks = max_pending_filter_tasks
        self.num_filter_task_returns = num_filter_task_returns
        self.merge_batch_size = merge_batch_size
        self.minhash_batch_size = minhash_batch_size
        self.memory_per_sample = memory_per_sample
        self.actor_memory = actor_memory
        self.task_memory = task_memory


# the MinHash parameters are documented once, on document_minhash_deduplicator
RayBTSMinhashDeduplicator.__init__.__doc__ = (DocumentMinhashDeduplicator.__init__.__doc__.rstrip() + "\n"
                                                 + RayBTSMinhashDeduplicator.__init__.__doc__)
