from typing import Union

import pyarrow.compute as pc

from data_juicer.ops.common.ray_dedup import keep_first, shard_count
from data_juicer.ops.deduplicator.document_deduplicator import DocumentDeduplicator
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import HashKeys

BACKENDS = ("ray_actor",)


def check_backend(name: str, backend: str) -> None:
    if backend not in BACKENDS:
        hint = " (a Redis server is not supported here)" if backend == "redis" else ""
        raise ValueError(f"{name}: unknown backend '{backend}'{hint}; use 'ray_actor'")


@OPERATORS.register_module("ray_document_deduplicator")
class RayDocumentDeduplicator(DocumentDeduplicator):
    """Removes exact duplicate documents on Ray: the MD5 of each text (as
    ``document_deduplicator``: optionally lower-cased, without digits, whitespace and
    punctuation) goes into ``__dj__hash``; hash sets sharded over ``dedup_set_num`` Ray actors
    keep, for each hash, the sample that comes first in the input, so the kept samples are the
    same as ``document_deduplicator``'s, on any cluster layout. On the default executor it is
    ``document_deduplicator``.
    """

    exec_modes = ("default", "ray", "ray_partitioned")

    def __init__(
        self,
        backend: str = "ray_actor",
        redis_address: str = "redis://localhost:6379",
        dedup_set_num: Union[int, str] = "auto",
        lowercase: bool = False,
        ignore_non_character: bool = False,
        **kwargs,
    ):
        """
        :param backend: where the hash sets live: ``ray_actor`` (Ray actors)
        :param redis_address: accepted for compatibility (the ``redis`` backend is not offered)
        :param dedup_set_num: number of hash-set actors, or ``auto`` (the cluster's CPUs, at most 16)
        :param lowercase: compare texts case-insensitively
        :param ignore_non_character: ignore digits, whitespace and punctuation when comparing
        """
        super().__init__(lowercase=lowercase, ignore_non_character=ignore_non_character, **kwargs)
        check_backend(self.name, backend)
        shard_count(dedup_set_num, default_cpus=1)  # validates
        self.backend = backend
        self.redis_address = redis_address
        self.dedup_set_num = dedup_set_num

    def run_ray(self, ds):
        """Keep the first sample of each hash of a Ray ``Dataset`` (hashes already computed)."""
        return keep_first(ds, lambda t: t.column(HashKeys.hash).to_pylist(), shard_count(self.dedup_set_num))


def media_exempt(column: str):
    """Rows whose media hash is empty (no media): always kept."""
    return lambda t: pc.equal(pc.utf8_length(t.column(column)), 0).to_numpy(zero_copy_only=False)
