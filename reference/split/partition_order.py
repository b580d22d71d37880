"""Partition execution order of a split (spec chapter 05, SPL-7, SPL-8, SPL-11).

Pure functions over partition ids. `Edges` are (before, after) pairs: a data or symbol
dependency, or a position constraint for a partition that changes global state.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

from reference.errors import FxOracleError
from reference.split.graph import PartitionId

Edge = tuple[PartitionId, PartitionId]


def lifo_order(
    appearance: Sequence[PartitionId], dependents: Mapping[PartitionId, Sequence[PartitionId]]
) -> tuple[PartitionId, ...] | None:
    """torch's order: Kahn's algorithm with a LIFO stack of ready partitions (SPL-7).

    Roots start in first-appearance order; a dependent is pushed when its last dependency is
    popped, in the order dependents were recorded. `None` when the dependencies have a cycle.
    """
    waiting = {p: 0 for p in appearance}
    for p in appearance:
        for d in dependents[p]:
            waiting[d] += 1
    stack = [p for p in appearance if waiting[p] == 0]
    order: list[PartitionId] = []
    while stack:
        p = stack.pop()
        order.append(p)
        for d in dependents[p]:
            waiting[d] -= 1
            if waiting[d] == 0:
                stack.append(d)
    return tuple(order) if len(order) == len(appearance) else None


def appearance_order(
    appearance: Sequence[PartitionId], edges: Sequence[Edge]
) -> tuple[PartitionId, ...] | None:
    """The topological order that takes, of the ready partitions, the first to appear (SPL-8).

    It equals `appearance` whenever `appearance` is itself topological. `None` on a cycle.
    """
    rank = {p: i for i, p in enumerate(appearance)}
    after: dict[PartitionId, list[PartitionId]] = {p: [] for p in appearance}
    waiting = dict.fromkeys(appearance, 0)
    for a, b in dict.fromkeys(edges):  # distinct edges, in a fixed order
        after[a].append(b)
        waiting[b] += 1
    ready = [rank[p] for p in appearance if waiting[p] == 0]
    heapq.heapify(ready)
    order: list[PartitionId] = []
    while ready:
        p = appearance[heapq.heappop(ready)]
        order.append(p)
        for b in after[p]:
            waiting[b] -= 1
            if waiting[b] == 0:
                heapq.heappush(ready, rank[b])
    return tuple(order) if len(order) == len(appearance) else None


def position_edges(appearance: Sequence[PartitionId], pinned: frozenset[PartitionId]) -> list[Edge]:
    """Edges that keep each pinned partition at its place in `appearance` (SPL-11)."""
    edges: list[Edge] = []
    for k, s in enumerate(appearance):
        if s in pinned:
            edges += [(p, s) for p in appearance[:k]]
            edges += [(s, q) for q in appearance[k + 1 :]]
    return edges


def find_cycle(appearance: Sequence[PartitionId], edges: Sequence[Edge]) -> tuple[PartitionId, ...]:
    """A dependency cycle among partitions (first element repeated at the end), for messages."""
    after: dict[PartitionId, list[PartitionId]] = {p: [] for p in appearance}
    for a, b in edges:
        after[a].append(b)
    for start in appearance:
        path = _cycle_from(start, after, [], set())
        if path:
            return path
    return ()


def _cycle_from(
    node: PartitionId,
    after: Mapping[PartitionId, Sequence[PartitionId]],
    path: list[PartitionId],
    done: set[PartitionId],
) -> tuple[PartitionId, ...]:
    if node in path:
        return (*path[path.index(node) :], node)
    if node in done:
        return ()
    for b in after[node]:
        found = _cycle_from(b, after, [*path, node], done)
        if found:
            return found
    done.add(node)
    return ()


def cycle_error(
    appearance: Sequence[PartitionId], edges: Sequence[Edge], what: str = ""
) -> FxOracleError:
    """torch's "cycle exists between partitions!" with the cycle spelled out."""
    cycle = " -> ".join(str(p) for p in find_cycle(appearance, edges))
    return FxOracleError(f"cycle exists between partitions! {what}partitions {cycle}")
