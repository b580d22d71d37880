"""torch's partition order for a split (spec chapter 05, SPL-7): Kahn's algorithm with a LIFO
stack, and the error for a cycle between partitions.

Pure functions over partition ids. `Edge`s are (before, after) pairs. Where this order is
wrong (B6, B7, N2), `reference.split.repair` repairs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reference.errors import FxOracleError
from reference.sort.cycle import find_cycle
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


def cycle_error(
    appearance: Sequence[PartitionId], edges: Sequence[Edge], what: str = ""
) -> FxOracleError:
    """torch's "cycle exists between partitions!", with the cycle spelled out (`p -> q -> p`)."""
    after: dict[PartitionId, list[PartitionId]] = {p: [] for p in appearance}
    for a, b in edges:
        after[a].append(b)
    cycle = find_cycle(appearance, after.__getitem__) or []
    path = " -> ".join(str(p) for p in [*cycle, *cycle[:1]])
    return FxOracleError(f"cycle exists between partitions! {what}partitions {path}")
