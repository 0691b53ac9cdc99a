"""Connected components of an undirected graph over nodes ``0..n-1``, vectorised with numpy.

Each component is labelled by its smallest node, which is what Data-Juicer's dedups keep (its
union-find always makes the smaller root the parent).
"""

from __future__ import annotations

import numpy as np


def min_component_labels(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """For each node, the smallest node of its component; edges are the pairs ``(u[i], v[i])``.

    Each round hooks the larger root of every edge whose ends lie in different trees onto the
    smaller one, then flattens the trees by pointer jumping. Roots only ever point to smaller
    nodes, so a component's smallest node stays its root; rounds stop when no edge joins two
    trees (at most about log2(n) of them).
    """
    parent = np.arange(n, dtype=np.int64)
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    while len(u):
        ru, rv = parent[u], parent[v]
        open_ = ru != rv
        if not open_.any():
            break
        u, v, ru, rv = u[open_], v[open_], ru[open_], rv[open_]
        # several edges may hook one root: any of their (smaller) roots is a valid parent
        parent[np.maximum(ru, rv)] = np.minimum(ru, rv)
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
    return parent


def first_duplicates(roots: np.ndarray, limit: int) -> list[tuple[int, int]]:
    """``(root, first other member)`` of up to ``limit`` components that have more than one
    node, in order of that second member; ``roots`` gives each node's component root."""
    dups = np.flatnonzero(roots != np.arange(len(roots)))
    _, first = np.unique(roots[dups], return_index=True)
    return [(int(roots[i]), int(i)) for i in dups[np.sort(first)[:limit]]]
