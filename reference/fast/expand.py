"""The expansion's speed-ups (spec chapter 02, EXP-11): the view read faster, and the cycle
test's ancestors found lazily.

`view_of_graph` builds the plain path's view (`reference.expand.graph_view.view_of_graph`)
reading fx's own table of each node's unique inputs (`Node._input_nodes`) instead of building
a list per node. The plain path (`reference.expand.lockstep.ancestors`) collects every ancestor
of a region's root before the first step. `AncestorSearch` answers "is u an ancestor of the
root?" with a backward search from the root that visits nodes in decreasing rank and stops at
the rank asked about, so a region pays only for the part of its root's ancestor cone its steps
reach: on a chain of blocks the plain sets cost (regions x graph), this about (graph). The same
answers, so the same expansion step for step
(`tests/reference/test_fast_expand.py`: equal views and expansions on generated graphs, the
corpus and random models).
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable, Sequence
from typing import cast

import torch.fx

from reference.expand.graph_view import BucketId, GraphView, make_view
from reference.expand.graph_view import view_of_graph as plain_view_of_graph
from reference.fx_helpers import NodeIndex


def view_of_graph(
    graph: torch.fx.Graph,
    buckets: Iterable[Sequence[torch.fx.Node]],
    excluded: Collection[torch.fx.Node] = frozenset(),
) -> tuple[GraphView, list[torch.fx.Node]]:
    """`graph_view.view_of_graph`, faster: the same view and nodes."""
    nodes = list(graph.nodes)
    index = dict(zip(nodes, cast("list[NodeIndex]", list(range(len(nodes)))), strict=True))
    position = index.get
    kept: list[tuple[NodeIndex, ...]] = []
    same: dict[NodeIndex, BucketId] = {}
    for members in buckets:
        found = tuple([p for p in map(position, members) if p is not None])
        if found:
            same.update(dict.fromkeys(found, cast("BucketId", len(kept))))
            kept.append(found)
    for out in map(position, excluded):
        same.pop(cast("NodeIndex", out), None)
    try:
        args = tuple([tuple(map(index.__getitem__, n._input_nodes)) for n in nodes])
    except KeyError:
        return plain_view_of_graph(graph, buckets, excluded)  # raises, naming the stray input
    names, ops = tuple([n.name for n in nodes]), tuple([n.op for n in nodes])
    return make_view(names, ops, args, tuple(kept), same), nodes


class AncestorSearch:
    """`u in AncestorSearch(view, root)`: whether `u` is an ancestor of `root`, searched lazily."""

    def __init__(self, view: GraphView, root: NodeIndex) -> None:
        self._view = view
        self._root = root
        self._found: set[int] = set()
        self._frontier: list[int] = [-root]  # max-heap of found, unexpanded nodes

    def __contains__(self, u: object) -> bool:
        if not isinstance(u, int) or u >= self._root:
            return False
        while self._frontier and -self._frontier[0] > u:
            v = -heapq.heappop(self._frontier)
            for a in self._view.args[v]:
                if a not in self._found:
                    self._found.add(a)
                    heapq.heappush(self._frontier, -a)
        return u in self._found
