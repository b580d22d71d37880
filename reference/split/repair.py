"""Order repair: the call order torch 2.13's `split_module` gets wrong (spec chapter 05, SPL-8,
SPL-11, SPL-15; findings B6, B6', B7, N2).

torch calls the partitions in its LIFO order (SPL-7), or with `keep_original_order` in plain
first-appearance order. The LIFO order may run a partition that only switches grad mode before
code that precedes it (B6, B6') or a read after a write (N2); first appearance need not be
topological (B7). `repaired_order` keeps torch's LIFO order when it is right, and otherwise
takes the first-appearance topological order over data, mutation and position edges. torch has
none of this, so `fxoracle bench --size` counts this module apart from the split.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reference.fx_helpers import NodeIndex
from reference.split.graph import PartitionId, SplitGraph, StateOp
from reference.split.partition_order import Edge, cycle_error

GradMode = bool | None  # None: the ambient mode the split module is called under


@dataclass(frozen=True, slots=True)
class GradContract:
    """What a partition needs of the grad mode when it starts, and what it leaves (SPL-11).

    A partition that sets the mode first (a prelude, or a grad node as its first node) needs
    nothing; any other needs `entry`, the mode in force before its first node in the original
    graph. A partition that runs a grad node (its own or a prelude) leaves `exit` behind.
    """

    needs_entry: bool
    entry: GradMode
    changes: bool
    exit: GradMode


def repaired_order(
    facts: SplitGraph,
    assignment: Sequence[PartitionId | None],
    dependents: Mapping[PartitionId, Sequence[PartitionId]],
    preludes: Mapping[PartitionId, Sequence[NodeIndex]],
    lifo: Sequence[PartitionId] | None,
) -> tuple[PartitionId, ...]:
    """The base graph's call order (SPL-8, SPL-11, SPL-15).

    `dependents` and `preludes` are keyed by partition in first-appearance order; `lifo` is
    torch's order, None with `keep_original_order`. `lifo` is kept when every partition starts
    under its grad mode, the caller is left the original's, and mutations keep their order.
    Otherwise: the first-appearance topological order, each partition holding a global-state
    node pinned at its place; a cycle among these edges is refused.
    """
    appearance = tuple(dependents)
    contracts = {p: grad_contract(facts, _nodes(assignment, p), preludes[p]) for p in appearance}
    final = final_grad_mode(facts)
    writes = mutation_edges(facts, assignment)
    if lifo is not None and keeps_grad_mode(lifo, contracts, final) and respects(lifo, writes):
        return tuple(lifo)
    edges = [(p, d) for p in appearance for d in dependents[p]]
    pinned = frozenset(
        p for n, p in zip(facts.nodes, assignment, strict=True) if n.state and p is not None
    )
    constrained = edges + writes + position_edges(appearance, pinned)
    order = appearance_order(appearance, constrained)
    if order is None:
        raise cycle_error(appearance, constrained, "with global-state partitions kept in place: ")
    assert keeps_grad_mode(order, contracts, final), "SPL-11: repaired order changes a grad mode"
    return order


def _nodes(assignment: Sequence[PartitionId | None], pid: PartitionId) -> list[NodeIndex]:
    return [NodeIndex(i) for i, p in enumerate(assignment) if p == pid]


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


def mutation_edges(facts: SplitGraph, assignment: Sequence[PartitionId | None]) -> list[Edge]:
    """SPL-15: a partition runs after the partitions holding the nodes its nodes must follow
    for what they write, read or draw (SRT-6, SRT-12, SRT-13 lifted to partitions)."""
    found: list[Edge] = []
    for i, node in enumerate(facts.nodes):
        for dep in node.after:
            pi, pd = assignment[i], assignment[dep]
            if pi is not None and pd is not None and pi != pd:
                found.append((pd, pi))
    return list(dict.fromkeys(found))


def respects(order: Sequence[PartitionId], edges: Sequence[Edge]) -> bool:
    """Every edge `(a, b)` has `a` before `b` in `order`."""
    position = {p: i for i, p in enumerate(order)}
    return all(position[a] < position[b] for a, b in edges)


def grad_contract(
    facts: SplitGraph, nodes: Sequence[NodeIndex], prelude: Sequence[NodeIndex]
) -> GradContract:
    """The grad-mode contract of a partition with these nodes and preludes."""
    grads = [i for i in prelude if facts.nodes[i].state is StateOp.SET_GRAD]
    grads += [i for i in nodes if facts.nodes[i].state is StateOp.SET_GRAD]
    before = [i for i in range(nodes[0]) if facts.nodes[i].state is StateOp.SET_GRAD]
    return GradContract(
        needs_entry=not grads or grads[0] not in (*prelude, nodes[0]),
        entry=facts.nodes[before[-1]].grad_enabled if before else None,
        changes=bool(grads),
        exit=facts.nodes[grads[-1]].grad_enabled if grads else None,
    )


def final_grad_mode(facts: SplitGraph) -> GradMode:
    """The grad mode the original graph leaves behind: its last grad node's, else ambient."""
    modes = [n.grad_enabled for n in facts.nodes if n.state is StateOp.SET_GRAD]
    return modes[-1] if modes else None


def keeps_grad_mode(
    order: Sequence[PartitionId], contracts: Mapping[PartitionId, GradContract], final: GradMode
) -> bool:
    """Whether, run in `order`, every partition starts under the grad mode it needs and the
    last leaves the mode the original graph leaves (`final`) (SPL-11).

    Autocast needs no such check: every partition opens and closes the autocast it uses.
    """
    mode: GradMode = None
    for pid in order:
        contract = contracts[pid]
        if contract.needs_entry and contract.entry != mode:
            return False
        if contract.changes:
            mode = contract.exit
    return mode == final
