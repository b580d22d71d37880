"""`reference.fast.cycle` answers as the plain cycle refusal does (spec chapter 03, RPL-25):
the pass with `fast=True` gives the same graph and outcomes on every corpus file and on random
models, and the two contractions find the same cycle on random graphs, regions and replacement
histories."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch
import torch.fx
from hypothesis import given
from hypothesis import strategies as st

from reference.dynamo.capture import Capture
from reference.expand.regions import search_regions
from reference.fast.cycle import FastContraction
from reference.graph_copy import copy_graph_module
from reference.pipeline import outline_groups
from reference.replace.cycle import Contraction
from tests.support.corpus import captured, corpus_files, random_captures

Node = torch.fx.Node
Edges = list[tuple[int, int]]
History = tuple[int, Edges, Edges, list[list[list[int]]]]


def _both_ways(c: Capture) -> int:
    """Outline `c` on the plain path and a copy on the fast one; the same graph and outcomes.
    Returns how many regions were replaced."""
    copy = copy_graph_module(c.gm)
    groups = search_regions(c.gm.graph, c.tracker.buckets()).region_groups()
    writes = dict(c.tracker.node_to_mutated_arg_positions)
    twin = [[[copy.nodes[n] for n in region] for region in group] for group in groups]
    twin_writes = {copy.nodes[n]: p for n, p in writes.items() if n in copy.nodes}
    plain = outline_groups(c.gm, groups, writes)
    fast = outline_groups(copy.gm, twin, twin_writes, fast=True)
    assert (fast.replaced, fast.refused) == (plain.replaced, plain.refused)
    assert copy.gm.code == c.gm.code and fast.subgraphs.keys() == plain.subgraphs.keys()
    return len(plain.replaced)


@pytest.mark.spec("RPL-25")
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.stem)
def test_rpl25_fast_equals_plain_on_the_corpus(path: Path) -> None:
    _both_ways(captured(path))


@pytest.mark.spec("RPL-25", "DIF-6")
def test_rpl25_fast_equals_plain_on_random_models() -> None:
    replaced = sum(map(_both_ways, random_captures(11, 20)))
    assert replaced >= 20, "the random models replace regions"


def _graph(size: int, edges: Sequence[tuple[int, int]]) -> tuple[torch.fx.Graph, list[Node]]:
    """A graph of `size` nodes in order, node j reading node i for each edge (i, j), i < j."""
    graph = torch.fx.Graph()
    nodes: list[Node] = []
    for j in range(size):
        args = tuple(nodes[i] for i, k in edges if k == j)
        nodes.append(graph.call_function(torch.add, args) if args else graph.placeholder("x"))
    graph.output(tuple(nodes))
    return graph, nodes


@st.composite
def _histories(draw: st.DrawFn) -> History:
    """A graph (its size, data edges and ordering deps, each from an earlier node to a later
    one) and a sequence of groups, each of disjoint regions of nodes no earlier group took."""
    size = draw(st.integers(4, 24))
    pairs = st.lists(
        st.tuples(st.integers(0, size - 1), st.integers(0, size - 1)), max_size=3 * size
    )
    edges, orders = (sorted({(min(p), max(p)) for p in draw(pairs) if p[0] != p[1]}) for _ in "ab")
    free = list(range(size))
    groups: list[list[list[int]]] = []
    for _ in range(draw(st.integers(1, 6))):
        picked = draw(st.permutations(free))[: draw(st.integers(1, 8))]
        cuts = sorted(draw(st.lists(st.integers(1, len(picked)), max_size=2)))
        bounds = [0, *cuts, len(picked)]
        regions = [sorted(picked[a:b]) for a, b in itertools.pairwise(bounds) if a < b]
        groups.append(regions)
        free = [i for i in free if i not in picked]
        if not free:
            break
    return size, edges, orders, groups


@pytest.mark.spec("RPL-25")
@given(_histories())
def test_rpl25_fast_contraction_finds_the_plain_cycle(history: History) -> None:
    """Group after group, both contractions give the same answer; an accepted group's regions
    are contracted in both, as the pass does."""
    size, edges, orders, groups = history
    graph, nodes = _graph(size, edges)
    deps: dict[Node, list[Node]] = {}
    for i, j in orders:
        deps.setdefault(nodes[j], []).append(nodes[i])
    plain, fast = Contraction(graph, deps), FastContraction(graph, deps)
    for group in groups:
        regions = [[nodes[i] for i in region] for region in group]
        found = plain.cycle(regions)
        assert fast.cycle(regions) == found
        for region in regions if found is None else ():
            plain.replaced(region)
            fast.replaced(region)
