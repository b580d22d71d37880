"""The expansion's speed-ups (spec chapter 02, EXP-11): the cycle test's ancestors, found lazily,
and the graph's view built in fewer steps.

The plain path (`reference.expand.lockstep.ancestors`) collects every ancestor
of a region's root before the first step. `AncestorSearch` answers "is u an ancestor of the
root?" with a backward search from the root that visits nodes in decreasing rank and stops at
the rank asked about, so a region pays only for the part of its root's ancestor cone its steps
reach: on a chain of blocks the plain sets cost (regions x graph), this about (graph). The same
answers, so the same expansion step for step. `view_parts` builds what
`reference.expand.regions.view_of_graph` builds, in fewer steps (`tests/reference/
test_fast_expand.py`: equal expansions on generated views, equal refusals of bad graphs;
`test_fast_paths.py`: equal views and expansions on the corpus and random models).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence

import torch.fx


class AncestorSearch:
    """`u in AncestorSearch(args, root)`: whether `u` is an ancestor of `root`, searched lazily
    (`args[i]`: the positions of node i's arguments, each before i)."""

    def __init__(self, args: Sequence[Sequence[int]], root: int) -> None:
        self._args = args
        self._root = root
        self._found: set[int] = set()
        self._frontier: list[int] = [-root]  # max-heap of found, unexpanded nodes

    def __contains__(self, u: object) -> bool:
        if not isinstance(u, int) or u >= self._root:
            return False
        while self._frontier and -self._frontier[0] > u:
            v = -heapq.heappop(self._frontier)
            for a in self._args[v]:
                if a not in self._found:
                    self._found.add(a)
                    heapq.heappush(self._frontier, -a)
        return u in self._found


Positions = tuple[tuple[int, ...], ...]
ViewParts = tuple[Positions, Positions, Positions, tuple[int | None, ...]]


def view_parts(
    nodes: Sequence[torch.fx.Node],
    buckets: Iterable[Sequence[torch.fx.Node]],
    excluded: Iterable[torch.fx.Node],
) -> ViewParts | None:
    """`regions.view_of_graph`'s view of `nodes` but its names and ops: the arguments, the
    users, the buckets and the bucket each node counts as, by position. Arguments are read in one
    pass from fx's `_input_nodes` (the dict `all_input_nodes` lists), bucket numbers kept in a
    list. None when an argument is not among `nodes` or comes after its user: the plain builder
    then says which."""
    index = dict(zip(nodes, range(len(nodes)), strict=True))
    try:
        args = tuple([tuple(map(index.__getitem__, n._input_nodes)) for n in nodes])
    except KeyError:
        return None
    users: list[list[int]] = [[] for _ in nodes]
    for i, node_args in enumerate(args):
        for a in node_args:
            if a >= i:
                return None
            users[a].append(i)
    return (args, tuple(map(tuple, users)), *_bucket_numbers(index, buckets, excluded))


def _bucket_numbers(
    index: Mapping[torch.fx.Node, int],
    buckets: Iterable[Sequence[torch.fx.Node]],
    excluded: Iterable[torch.fx.Node],
) -> tuple[Positions, tuple[int | None, ...]]:
    """The buckets by position (members not in `index` dropped, then empty buckets) and the
    bucket each position counts as (None: in no bucket, or `excluded`)."""
    position = index.get
    kept: list[tuple[int, ...]] = []
    bucket_of: list[int | None] = [None] * len(index)
    for members in buckets:
        if len(members) == 1:  # most buckets: no list to build
            only = position(members[0])
            found: tuple[int, ...] = () if only is None else (only,)
        else:
            found = tuple([p for p in map(position, members) if p is not None])
        if found:
            for p in found:
                bucket_of[p] = len(kept)
            kept.append(found)
    for out in map(position, excluded):
        if out is not None:
            bucket_of[out] = None
    return tuple(kept), tuple(bucket_of)
