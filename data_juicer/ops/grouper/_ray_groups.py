"""The groupers on Ray Data, without gathering the dataset on the driver.

The ``run_ray`` of each grouper builds its batched samples in Ray workers with the same
Arrow code the default executor uses (``ops/common/grouping.py``), applied to blocks instead of
to the whole table, so the output is the same:

- ``key_value_grouper``: a shuffle of Ray tasks: rows hashed by group identity into parts,
  each part grouped (one batched row per group, its rows in input order), the groups gathered
  back in order of their first sample, which is Data-Juicer's group order;
- ``naive_grouper``: the blocks are merged into one by a task (the one batched row is, by
  definition, the whole dataset: one worker holds it, the driver never does);
- ``naive_reverse_grouper``: every block is unbatched by its own task; the batch meta export is
  written per block, then its parts are appended, in order, to the export file.

Rows come in with the stable id column (``__dj__index__``, their input order) and leave without
it (the executor numbers the new rows).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid

import pyarrow as pa

from data_juicer.utils.constant import Fields

ID = Fields.row_index
_GROUP = "__dj__group__"
_FIRST = "__dj__group_first__"


class _Table:
    """A ``pa.Table`` with the bits of the dataset surface the grouping helpers use."""

    def __init__(self, table: pa.Table):
        self.table = table

    @property
    def column_names(self) -> list:
        return self.table.column_names

    def __len__(self) -> int:
        return self.table.num_rows

    def arrow_table(self) -> pa.Table:
        return self.table

    def arrow_column(self, name: str):
        return self.table.column(name)

    @classmethod
    def from_table(cls, table: pa.Table) -> pa.Table:
        return table


def _drop(table: pa.Table, names) -> pa.Table:
    names = [n for n in names if n in table.column_names]
    return table.drop_columns(names) if names else table


def _remote(fn, **options):
    """``fn`` as a Ray remote function (made once per process)."""
    import ray

    key = (fn.__name__, tuple(sorted(options.items())))
    if key not in _REMOTES:
        _REMOTES[key] = ray.remote(**options)(fn) if options else ray.remote(fn)
    return _REMOTES[key]


_REMOTES: dict = {}


def _refs(ds) -> list:
    """The blocks of a ``ray.data.Dataset`` (in order), as Arrow table refs."""
    return list(ds.materialize().to_arrow_refs())


def _unify(tables) -> pa.Table:
    tables = [t for t in tables if t.num_columns]
    if not tables:
        return pa.table({})
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")


def _from_refs(refs, counts):
    """A ``ray.data.Dataset`` of these blocks, leaving out the empty ones (keeping one)."""
    import ray.data

    keep = [r for r, n in zip(refs, counts) if n] or refs[:1]
    return ray.data.from_arrow_refs(keep)


# -- key_value_grouper --------------------------------------------------------------------------
# A shuffle of plain Ray tasks (Ray Data's ``groupby`` starts hash-shuffle actors, far too costly
# for the dataset sizes a grouper usually sees): (1) each block hashes its rows' group identities
# into P parts; (2) each part's rows are grouped, one batched row per group with its first row's
# id; (3) output block b gathers, from every part, the groups whose first row lies in input block
# b's id range, in order of that first row: Data-Juicer's group order. The driver handles refs and
# one number per input block.
def _identities(table: pa.Table, keys: list) -> list:
    from data_juicer.ops.grouper.key_value_grouper import _path_values

    view = _Table(table)
    columns = [_path_values(view, k) for k in keys]
    return [str(list(zip(keys, values))) for values in zip(*columns)]


def _min_id(table: pa.Table) -> int:
    import pyarrow.compute as pc

    return int(pc.min(table.column(ID)).as_py()) if table.num_rows else -1


def _hash_parts(table: pa.Table, keys: list, parts: int):
    """Split one block into ``parts`` tables by the hash of each row's group identity."""
    import zlib

    import numpy as np

    idents = _identities(table, keys)
    which = np.fromiter((zlib.crc32(s.encode("utf-8")) % parts for s in idents), dtype=np.int64, count=len(idents))
    table = table.append_column(_GROUP, pa.array(idents, type=pa.string()))
    out = [table.filter(pa.array(which == p)) for p in range(parts)]
    return out if parts > 1 else out[0]


def _group_part(*pieces) -> pa.Table:
    """The batched rows of one part's groups, sorted by each group's first row id (``_FIRST``)."""
    import numpy as np
    import pyarrow.compute as pc

    from data_juicer.ops.common.grouping import group_rows

    table = _unify(pieces)
    if not table.num_rows:
        return table
    table = table.take(pc.sort_indices(table, [(ID, "ascending")]))
    groups: dict[str, list[int]] = {}
    for i, ident in enumerate(table.column(_GROUP).to_pylist()):
        g = groups.get(ident)
        if g is None:
            groups[ident] = [i]
        else:
            g.append(i)
    ids = table.column(ID).to_numpy()
    members = list(groups.values())  # in order of first row, as the table is in id order
    rows = group_rows(_Table(_drop(table, [ID, _GROUP])), members)
    firsts = np.fromiter((ids[g[0]] for g in members), dtype=np.int64, count=len(members))
    return rows.append_column(_FIRST, pa.array(firsts))


def _gather_range(lo: int, hi: int, *parts):
    """Output block: the groups of every part whose first row id is in [lo, hi), in that order."""
    import numpy as np
    import pyarrow.compute as pc

    taken = []
    for t in parts:
        if not t.num_rows:
            continue
        first = t.column(_FIRST).to_numpy()
        a, b = np.searchsorted(first, lo, side="left"), np.searchsorted(first, hi, side="left")
        if b > a:
            taken.append(t.slice(int(a), int(b - a)))
    table = _unify(taken)
    if not table.num_rows:
        return table, 0
    table = table.take(pc.sort_indices(table, [(_FIRST, "ascending")]))
    return table.drop_columns([_FIRST]), table.num_rows


def group_by_keys(ds, keys: list, max_parts: int = 16):
    """``key_value_grouper`` on a ``ray.data.Dataset``: one batched row per group, in order of each
    group's first sample (its rows in input order), built in the workers."""
    import ray

    refs = _refs(ds)
    firsts = ray.get([_remote(_min_id).remote(r) for r in refs])
    refs = [r for r, f in zip(refs, firsts) if f >= 0]
    firsts = [f for f in firsts if f >= 0]
    if not refs:
        return ds
    parts = max(1, min(len(refs), max_parts))
    split = _remote(_hash_parts, num_returns=parts)
    pieces = [split.remote(r, keys, parts) for r in refs]
    if parts == 1:
        pieces = [[p] for p in pieces]
    grouped = [_remote(_group_part).remote(*[pieces[b][p] for b in range(len(refs))]) for p in range(parts)]
    bounds = firsts[1:] + [2**62]
    gather = _remote(_gather_range, num_returns=2)
    outs = [gather.remote(lo, hi, *grouped) for lo, hi in zip(firsts, bounds)]
    counts = ray.get([o[1] for o in outs])
    return _from_refs([o[0] for o in outs], counts)


# -- naive_grouper ------------------------------------------------------------------------------
def _all_rows(*tables) -> pa.Table:
    from data_juicer.ops.common.grouping import group_rows

    table = _unify(tables)
    if not table.num_rows:
        return table
    return group_rows(_Table(_drop(table, [ID])), [range(table.num_rows)])


def group_all(ds):
    """``naive_grouper`` on a ``ray.data.Dataset``: the whole dataset as one batched row, built in
    one worker from the blocks in order (the one row is, by definition, all of the data)."""
    import ray.data

    return ray.data.from_arrow_refs([_remote(_all_rows).remote(*_refs(ds))])


# -- naive_reverse_grouper ----------------------------------------------------------------------
def _ungroup_block(table: pa.Table, meta_parts, i: int):
    from data_juicer.ops.common.grouping import ungroup_rows

    if not table.num_rows:
        return _drop(table, [ID, Fields.batch_meta]), 0
    if meta_parts is not None:  # this block's metas as part i (parts are appended in block order)
        metas = table.column(Fields.batch_meta).to_pylist() if Fields.batch_meta in table.column_names else []
        tmp = os.path.join(meta_parts, f".{i:08d}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(m, ensure_ascii=False) + "\n" for m in metas)
        os.replace(tmp, os.path.join(meta_parts, f"{i:08d}.jsonl"))
    out = ungroup_rows(_Table(_drop(table, [ID])), drop=(Fields.batch_meta,))
    return out, out.num_rows


def ungroup(ds, batch_meta_export_path=None):
    """``naive_reverse_grouper`` on a ``ray.data.Dataset``: each block unbatched by a task; with
    ``batch_meta_export_path``, each block's metas are written as a part, and the parts appended, in
    order, to that file (streamed) once every block is done."""
    import ray

    parts = None
    if batch_meta_export_path is not None:
        path = os.path.abspath(batch_meta_export_path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        parts = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.parts-{uuid.uuid4().hex[:8]}")
        os.makedirs(parts)
    try:
        task = _remote(_ungroup_block, num_returns=2)
        outs = [task.remote(r, parts, i) for i, r in enumerate(_refs(ds))]
        counts = ray.get([o[1] for o in outs])
        if parts is not None:
            tmp = os.path.join(parts, "all.out")
            with open(tmp, "wb") as w:
                for name in sorted(n for n in os.listdir(parts) if n.endswith(".jsonl")):
                    with open(os.path.join(parts, name), "rb") as f:
                        shutil.copyfileobj(f, w, length=8 << 20)
            os.replace(tmp, path)
        return _from_refs([o[0] for o in outs], counts)
    finally:
        if parts is not None:
            shutil.rmtree(parts, ignore_errors=True)
