"""Distributed dedup steps on a Ray Data ``Dataset`` for the ``ray_*`` deduplicators.

Rows carry an order key: the stable sample id (``__dj__index__``, the row's position in the
input) or a user's ``__dj__uid``. Both steps keep, in each group of duplicates, the row with
the smallest key, so the kept set is the one the single-machine op keeps, whatever the block
layout or the order in which workers report.

- ``keep_first``: exact keys (hash strings) go to hash-set actors sharded by key; each shard
  remembers the smallest order key per hash; a second pass keeps the rows that are it.
- ``keep_cluster_roots`` (MinHash LSH): each band of each signature goes to bucket actors
  sharded by (band, bucket); a bucket remembers its smallest order key, and every other member
  yields one edge to it. The edges (only duplicates make them) are joined into clusters with
  a vectorised union-find; rows whose key is not their cluster's smallest are removed.
"""

from __future__ import annotations

import zlib

import numpy as np
import pyarrow as pa

from data_juicer.utils.constant import Fields

ORDER_KEY = Fields.row_index


def shard_count(setting, default_cpus: int | None = None) -> int:
    """Number of actors: an int, or ``'auto'`` (the cluster's CPUs, 1 to 16)."""
    if isinstance(setting, int) and not isinstance(setting, bool):
        if setting < 1:
            raise ValueError(f"the number of dedup actors must be at least 1, got {setting}")
        return setting
    if setting != "auto":
        raise ValueError(f"the number of dedup actors must be an integer or 'auto', got {setting!r}")
    if default_cpus is None:
        import ray

        default_cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(1, min(16, default_cpus))


def _shard(keys: list, n: int) -> np.ndarray:
    return np.fromiter((zlib.crc32(k if isinstance(k, bytes) else k.encode()) % n for k in keys), dtype=np.int64,
                       count=len(keys))


class _FirstSet:
    """One shard of a hash set: the smallest order key seen per hash."""

    def __init__(self):
        self.first: dict = {}

    def offer(self, keys: list, order: list) -> int:
        first = self.first
        for k, o in zip(keys, order):
            cur = first.get(k)
            if cur is None or o < cur:
                first[k] = o
        return len(keys)

    def is_first(self, keys: list, order: list) -> list:
        first = self.first
        return [first[k] == o for k, o in zip(keys, order)]


class _Buckets:
    """One shard of the LSH bucket tables: per bucket, its smallest order key and the others."""

    def __init__(self):
        self.head: dict = {}
        self.members: dict = {}

    def offer(self, keys: list, order: list) -> int:
        head, members = self.head, self.members
        for k, o in zip(keys, order):
            cur = head.get(k)
            if cur is None:
                head[k] = o
            elif o < cur:  # a new head: the old one becomes a member
                members.setdefault(k, []).append(cur)
                head[k] = o
            else:
                members.setdefault(k, []).append(o)
        return len(keys)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        u, v = [], []
        for k, others in self.members.items():
            h = self.head[k]
            u.extend(others)
            v.extend([h] * len(others))
        return np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)


def keep_first(ds, keys_of, num_shards: int, exempt_of=None):
    """Rows of ``ds`` that hold the smallest ``__dj__index__`` of their key.

    ``keys_of(table) -> list`` gives each row's key; ``exempt_of(table) -> bool array`` (optional)
    marks rows always kept (their keys are not offered).
    """
    import ray

    actor = ray.remote(num_cpus=0)(_FirstSet)
    shards = [actor.remote() for _ in range(num_shards)]

    def split(table):
        keys = keys_of(table)
        order = table.column(ORDER_KEY).to_pylist()
        live = np.ones(len(keys), dtype=bool) if exempt_of is None else ~exempt_of(table)
        which = _shard(keys, num_shards)
        return keys, order, live, which

    def offer(table: pa.Table) -> pa.Table:
        keys, order, live, which = split(table)
        refs = []
        for s in np.unique(which[live]):
            rows = np.flatnonzero(live & (which == s))
            refs.append(shards[s].offer.remote([keys[i] for i in rows], [order[i] for i in rows]))
        ray.get(refs)
        return table

    def keep(table: pa.Table) -> pa.Table:
        keys, order, live, which = split(table)
        mask = ~live
        refs = []
        for s in np.unique(which[live]):
            rows = np.flatnonzero(live & (which == s))
            refs.append((rows, shards[s].is_first.remote([keys[i] for i in rows], [order[i] for i in rows])))
        for rows, ref in refs:
            mask[rows] = ray.get(ref)
        return table if mask.all() else table.filter(pa.array(mask))

    try:
        ds = ds.map_batches(offer, batch_format="pyarrow", zero_copy_batch=True).materialize()
        return ds.map_batches(keep, batch_format="pyarrow", zero_copy_batch=True).materialize()
    finally:
        for s in shards:
            ray.kill(s)


def keep_cluster_roots(ds, band_keys_of, order_key: str, num_shards: int):
    """Rows of ``ds`` whose ``order_key`` is the smallest of their MinHash cluster.

    ``band_keys_of(table) -> list[list[bytes]]`` gives, per band, each row's bucket key (the band
    number is part of the key, so bands never mix).
    """
    import ray

    from data_juicer.ops.common.union_find import min_component_labels

    actor = ray.remote(num_cpus=0)(_Buckets)
    shards = [actor.remote() for _ in range(num_shards)]

    def offer(table: pa.Table) -> pa.Table:
        order = table.column(order_key).to_pylist()
        refs = []
        for keys in band_keys_of(table):
            which = _shard(keys, num_shards)
            for s in np.unique(which):
                rows = np.flatnonzero(which == s)
                refs.append(shards[s].offer.remote([keys[i] for i in rows], [order[i] for i in rows]))
        ray.get(refs)
        return table.select([order_key])

    try:
        orders = ds.map_batches(offer, batch_format="pyarrow").materialize()
        edges = ray.get([s.edges.remote() for s in shards])
    finally:
        for s in shards:
            ray.kill(s)
    del orders
    u = np.concatenate([e[0] for e in edges]) if edges else np.zeros(0, np.int64)
    v = np.concatenate([e[1] for e in edges]) if edges else np.zeros(0, np.int64)
    if not len(u):
        return ds
    # clusters over the order keys that take part in an edge (the others are their own roots)
    nodes = np.unique(np.concatenate([u, v]))
    labels = min_component_labels(len(nodes), np.searchsorted(nodes, u), np.searchsorted(nodes, v))
    removed = nodes[labels != np.arange(len(nodes))]

    def drop(table: pa.Table) -> pa.Table:
        keys = table.column(order_key).to_numpy()
        gone = np.isin(keys, removed)
        return table if not gone.any() else table.filter(pa.array(~gone))

    return ds.map_batches(drop, batch_format="pyarrow").materialize()
