import numpy as np
import pytest

from data_juicer.ops.common.union_find import first_duplicates, min_component_labels


def naive_labels(n, edges):
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        parent[max(ra, rb)] = min(ra, rb)
    return [find(x) for x in range(n)]


def test_components_are_named_by_their_smallest_node():
    assert min_component_labels(6, [5, 3], [3, 1]).tolist() == [0, 1, 2, 1, 4, 1]
    assert min_component_labels(3, [], []).tolist() == [0, 1, 2]
    # a chain in reverse order, and a self loop
    assert min_component_labels(5, [4, 3, 2, 1, 2], [3, 2, 1, 0, 2]).tolist() == [0] * 5


@pytest.mark.parametrize("seed", range(5))
def test_random_graphs_match_a_plain_union_find(seed):
    rng = np.random.RandomState(seed)
    n = 300
    u, v = rng.randint(0, n, size=(2, 200 + 50 * seed))
    assert min_component_labels(n, u, v).tolist() == naive_labels(n, zip(u.tolist(), v.tolist()))


def test_first_duplicates_in_order_of_the_second_member():
    roots = np.array([0, 1, 1, 0, 4, 4, 6])
    assert first_duplicates(roots, 5) == [(1, 2), (0, 3), (4, 5)]
    assert first_duplicates(roots, 1) == [(1, 2)]
    assert first_duplicates(roots, 0) == []
