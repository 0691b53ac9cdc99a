"""Batched samples for groupers: one row per group whose every field is the list of the
group's values (Data-Juicer's "dict of lists" sample), and back. Built on Arrow, so column
types are kept as they are."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def _table(dataset) -> pa.Table:
    return dataset.arrow_table()


def group_rows(dataset, groups: list):
    """One row per group (a sequence of row indices, in the order given); each column becomes
    a list column holding the group's values."""
    table = _table(dataset)
    lengths = np.fromiter((len(g) for g in groups), dtype=np.int64, count=len(groups))
    order = np.concatenate([np.asarray(g, dtype=np.int64) for g in groups]) if groups else np.zeros(0, np.int64)
    offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
    taken = table.take(pa.array(order))
    cols = [pa.ListArray.from_arrays(offsets, taken.column(i).combine_chunks()) for i in range(taken.num_columns)]
    return type(dataset).from_table(pa.table(cols, names=taken.column_names))


def ungroup_rows(dataset, drop: tuple = ()):
    """The inverse of :func:`group_rows`: every list column is flattened back into rows; the
    number of rows a batched sample yields is the length of its first column's list. Columns
    in ``drop`` are left out."""
    table = _table(dataset)
    names = [n for n in table.column_names if n not in drop]
    if not names:
        raise ValueError("cannot unbatch samples that have no fields besides the batch meta")
    cols, counts = [], None
    for name in names:
        col = table.column(name).combine_chunks()
        if not (pa.types.is_list(col.type) or pa.types.is_large_list(col.type)):
            raise ValueError(f"field '{name}' of the batched samples is not a list ({col.type}); every field of a "
                             "batched sample must hold one value per sample (e.g. as made by a grouper)")
        if col.null_count:
            raise ValueError(f"field '{name}' of the batched samples is null in some rows; every field of a batched "
                             "sample must hold one value per sample")
        lengths = pc.list_value_length(col).to_numpy(zero_copy_only=False)
        if counts is None:
            counts = lengths
        elif not np.array_equal(lengths, counts):
            row = int(np.flatnonzero(lengths != counts)[0])
            raise ValueError(f"batched sample {row}: field '{name}' holds {int(lengths[row])} values but "
                             f"'{names[0]}' holds {int(counts[row])}; all fields must have one value per sample")
        cols.append(pc.list_flatten(col))
    return type(dataset).from_table(pa.table(cols, names=names))
