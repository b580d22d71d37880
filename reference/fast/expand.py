"""The expansion's speed-up (spec chapter 02, EXP-11): the cycle test's ancestors, found lazily.

The plain path (`reference.expand.lockstep.ancestors`) collects every ancestor
of a region's root before the first step. `AncestorSearch` answers "is u an ancestor of the
root?" with a backward search from the root that visits nodes in decreasing rank and stops at
the rank asked about, so a region pays only for the part of its root's ancestor cone its steps
reach: on a chain of blocks the plain sets cost (regions x graph), this about (graph). The same
answers, so the same expansion step for step
(`tests/reference/test_fast_expand.py`: equal expansions on generated graphs, the corpus and
random models).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence


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
