"""SRT-2, SRT-4: the sort's speed-ups (`reference.fast.sort`) give the plain path's order: the
scan pointers the same order (or cycle) and trace as rescanning, the longest-run apply the same
graph order with the fewest moves; on generated graphs here, on the corpus and random models in
`tests/reference/test_fast_paths.py`."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from torch.fx import Graph

from reference.errors import FxOracleError
from reference.sort.stable import SortStep, apply_order, order_indices, stable_topological_sort
from tests.oracle.test_order_torch import _random_graph
from tests.reference.test_order import names

deps_lists = st.integers(1, 12).flatmap(
    lambda n: st.lists(st.lists(st.integers(0, n - 1), max_size=4), min_size=n, max_size=n)
)


@given(deps_lists)
def test_srt2_fast_order_equals_plain(deps: list[list[int]]) -> None:
    """SRT-2: the scan pointers give the order or cycle, and every visit, of rescanning."""
    plain: list[SortStep] = []
    fast: list[SortStep] = []
    expected = order_indices(len(deps), deps, plain.append)
    assert order_indices(len(deps), deps, fast.append, fast=True) == expected
    assert fast == plain


@pytest.mark.parametrize("seed", range(60))
def test_srt2_fast_sort_equals_plain_on_scrambled_graphs(seed: int) -> None:
    """SRT-2, SRT-4: on scrambled random graphs (some with cycles), both sorts give the same
    graph order or the same error."""
    results = []
    for fast in (False, True):
        g, extra = _random_graph(seed)
        try:
            stable_topological_sort(g, extra, fast=fast)
        except FxOracleError as error:
            results.append(str(error))
        else:
            results.append(" ".join(names(g)))
    assert results[0] == results[1]


def _fewest_moves(values: list[int]) -> int:
    """n minus the longest increasing subsequence, by the O(n^2) textbook recurrence."""
    best = [1] * len(values)
    for i in range(len(values)):
        for j in range(i):
            if values[j] < values[i]:
                best[i] = max(best[i], best[j] + 1)
    return len(values) - max(best, default=0)


@pytest.mark.spec("SRT-4")
@given(st.permutations(list(range(9))))
def test_srt4_fast_apply_order_uses_the_fewest_moves(permutation: list[int]) -> None:
    """SRT-4: both applies reach the order; the fast one moves exactly n - LIS nodes, the plain
    one (torch's cursor) no fewer."""
    moves = []
    for fast in (False, True):
        g = Graph()
        nodes = [g.placeholder(f"p{i}") for i in range(9)]
        target = [nodes[i] for i in permutation]
        moves.append(apply_order(g, target, fast=fast))
        assert list(g.nodes) == target
    assert moves[1] == _fewest_moves(permutation) <= moves[0]
