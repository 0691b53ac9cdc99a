from typing import List, Optional

from data_juicer.ops.base import Grouper
from data_juicer.ops.common.grouping import group_rows
from data_juicer.ops.registry import OPERATORS


def _path_values(dataset, key: str) -> list:
    """Each row's value at a dotted path; numeric parts index lists; None where it is missing."""
    head, *rest = key.split(".")
    if head.isdigit() or head not in dataset.column_names:
        return [None] * len(dataset)
    values = dataset.arrow_column(head).to_pylist()
    if not rest:
        return values
    parts = [int(p) if p.isdigit() else p for p in rest]
    out = []
    for v in values:
        for p in parts:
            try:
                v = v[p]
            except (KeyError, IndexError, TypeError):
                v = None
                break
        out.append(v)
    return out


@OPERATORS.register_module("key_value_grouper")
class KeyValueGrouper(Grouper):
    """Groups samples that have the same values in the given keys into batched samples: one row
    per group (in order of each group's first sample) whose every field is the list of the
    group's values. Keys may be dotted paths into nested fields (``meta.lang``,
    ``__dj__stats__.text_len``, ``tags.0``); a missing value counts as None. Values are compared
    by their Python ``repr``."""

    def __init__(self, group_by_keys: Optional[List[str]] = None, **kwargs):
        """
        :param group_by_keys: the (possibly dotted) keys whose values define a group; default:
            the text key
        """
        super().__init__(**kwargs)
        if group_by_keys is not None and not isinstance(group_by_keys, (list, tuple)):
            raise ValueError(f"group_by_keys must be a list of keys, got {group_by_keys!r}")
        self.group_by_keys = list(group_by_keys or [self.text_key])

    def process(self, dataset):
        if len(dataset) == 0:
            return dataset
        keys = sorted(set(self.group_by_keys))
        columns = [_path_values(dataset, k) for k in keys]
        groups: dict[str, list[int]] = {}
        for i, values in enumerate(zip(*columns)):
            # the same identity as Data-Juicer: the text of the sorted (key, value) pairs
            ident = str(list(zip(keys, values)))
            group = groups.get(ident)
            if group is None:
                groups[ident] = [i]
            else:
                group.append(i)
        return group_rows(dataset, list(groups.values()))

    def run_ray(self, ds):
        """On Ray: group identities per block, a shuffle of Ray tasks by identity, the groups put
        back in order of their first sample (the same rows as ``process``; nothing gathered on
        the driver; see ``_ray_groups.py``)."""
        from data_juicer.ops.grouper._ray_groups import group_by_keys

        if ds.count() == 0:
            return ds
        return group_by_keys(ds, sorted(set(self.group_by_keys)))
