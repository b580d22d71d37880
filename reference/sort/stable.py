"""Stable topological sort (spec chapter 04, "Stable topological sort and ordering deps").

Contract: `stable_topological_sort(graph, additional_deps)` reorders `graph` in place into torch's
order (`_stable_topological_sort_impl` in `torch/_dynamo/graph_deduplication.py`, the same order
in 2.13-2.15; 2.15 computes it in linear time): nodes
are visited in current order, a node waits on its LAST unready dependency, a ready node is placed
after the previously placed one and re-queues its waiters in the order they started waiting,
the output goes last (SRT-1..SRT-4). When no order exists it raises `NoOrder` (an `FxOracleError`
that is also an `AssertionError`, what torch raises there) naming one
cycle and leaves the graph untouched (SRT-5).

The algorithm is the pure `order_indices` over integer positions; `stable_topological_sort` is
a thin adapter that maps nodes to positions and applies the result as torch does. With
`fast=True` both take the speed-ups of `reference.fast.sort` (the same order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from torch.fx import Graph, Node

from reference.errors import FxOracleError, expect
from reference.fast.sort import LastUnready, on_longest_increasing
from reference.fx_helpers import unique_node_args
from reference.sort.cycle import Cycle as Cycle  # re-exported: part of the sort's result
from reference.sort.cycle import waiting_cycle


class NoOrder(FxOracleError, AssertionError):
    """No topological order exists: fxoracle's error type, and torch's (`AssertionError`), so
    code written against torch's sort catches it too (SRT-5)."""


@dataclass(frozen=True, slots=True)
class SortStep:
    """One visit of `order_indices`, for a reader (chapter 04's picture): the node visited,
    the dep it now waits on (None: it was placed), and the three lists after the visit."""

    node: int
    waits_on: int | None
    pending: tuple[int, ...]  # the stack: the next node to visit is first here
    waiting: tuple[tuple[int, tuple[int, ...]], ...]  # blocker -> its waiters, in arrival order
    order: tuple[int, ...]


def order_indices(
    n: int,
    deps: Sequence[Sequence[int]],
    trace: Callable[[SortStep], None] | None = None,
    *,
    fast: bool = False,
) -> list[int] | Cycle:
    """torch's stable order of positions `0..n-1`, where `deps[i]` lists what `i` must follow.

    Duplicate entries in `deps[i]` count at their first occurrence (torch's `OrderedSet`).
    `trace`, when given, sees every visit (it changes nothing); `fast=True` finds each node's
    last unready dep with `reference.fast.sort.LastUnready` (the same order). SRT-1, SRT-2, SRT-5.
    """
    unique = _unique_deps(n, deps)
    last_unready = LastUnready(unique) if fast else partial(_last_unready, unique)
    placed = [False] * n
    waits_on = list(range(n))
    waiting: dict[int, list[int]] = {}
    order: list[int] = []
    pending = list(range(n - 1, -1, -1))  # a stack: the next node to visit is last
    while pending:
        node = pending.pop()
        blocker = last_unready(node, placed)
        if blocker is not None:
            waits_on[node] = blocker
            waiting.setdefault(blocker, []).append(node)
        else:
            placed[node] = True
            order.append(node)
            pending.extend(reversed(waiting.pop(node, [])))
        if trace is not None:
            lists = (tuple(reversed(pending)), tuple((b, tuple(w)) for b, w in waiting.items()))
            trace(SortStep(node, blocker, *lists, tuple(order)))
    if len(order) < n:
        return waiting_cycle(placed, waits_on)
    return order


def _unique_deps(n: int, deps: Sequence[Sequence[int]]) -> list[list[int]]:
    """`deps` without repeats (first occurrence kept); bad sizes or positions are bad input."""
    if n < 0 or len(deps) != n:
        raise FxOracleError(f"SRT-2: expected deps for {n} nodes, got {len(deps)}")
    unique: list[list[int]] = []
    for node, own in enumerate(deps):
        for dep in own:
            if not 0 <= dep < n:
                raise FxOracleError(f"SRT-2: node {node} depends on {dep}, outside 0..{n - 1}")
        unique.append(list(dict.fromkeys(own)))
    return unique


def _last_unready(deps: list[list[int]], node: int, placed: list[bool]) -> int | None:
    """The last dep of `node` that is not placed yet, or None. SRT-2."""
    return next((dep for dep in reversed(deps[node]) if not placed[dep]), None)


def node_deps(node: Node, additional_deps: Mapping[Node, Sequence[Node]]) -> list[Node]:
    """What `node` must follow: unique flat args, then its extra deps not already listed. SRT-2."""
    unique = dict.fromkeys(unique_node_args(node))
    unique.update(dict.fromkeys(additional_deps.get(node, ())))
    return list(unique)


def stable_topological_sort(
    graph: Graph, additional_deps: Mapping[Node, Sequence[Node]], *, fast: bool = False
) -> None:
    """Reorder `graph` in place into torch's stable order, the output node last; `fast=True`
    takes the speed-ups of `reference.fast.sort` (the same order, SRT-2, SRT-4).

    Raises `FxOracleError` (graph untouched) on a cycle, or when a node depends on the output
    node or on a node outside the graph (torch reports both as a failed sort). SRT-1..SRT-5.
    """
    expect(graph, Graph, "stable_topological_sort: graph")  # FIL-6
    expect(additional_deps, Mapping, "stable_topological_sort: additional_deps")
    body = [node for node in graph.nodes if node.op != "output"]
    outputs = [node for node in graph.nodes if node.op == "output"]
    position = {node: i for i, node in enumerate(body)}
    deps: list[list[int]] = []
    for node in body:
        deps.append([])
        for dep in node_deps(node, additional_deps):
            if dep not in position:
                where = "the output node" if dep.op == "output" else "a node outside the graph"
                raise FxOracleError(f"SRT-5: {node.name} depends on {dep.name}, {where}")
            deps[-1].append(position[dep])
    result = order_indices(len(body), deps, fast=fast)
    if isinstance(result, Cycle):
        names = " -> ".join(body[i].name for i in result.path)
        raise NoOrder(f"SRT-5: no topological order exists: cycle {names}")
    apply_order(graph, [body[i] for i in result] + outputs, fast=fast)


def apply_order(graph: Graph, order: Sequence[Node], *, fast: bool = False) -> int:
    """Reorder `graph`'s nodes into `order` in place; return how many nodes were moved.

    Each node is moved right after the one before it in `order` unless it is there already (torch's
    cursor), so a sorted graph moves nothing (SRT-4). `fast=True` keeps the nodes on a longest
    subsequence already in relative order (`reference.fast.sort.on_longest_increasing`) and
    moves only the others: the same order, with the fewest moves.
    """
    current = list(graph.nodes)
    rank = {node: i for i, node in enumerate(current)}
    if len(order) != len(current) or any(node not in rank for node in order):
        raise FxOracleError("SRT-4: the order must list every node of the graph exactly once")
    stays = on_longest_increasing([rank[node] for node in order]) if fast else [False] * len(order)
    moves = 0
    previous: Node | None = None
    for node, stay in zip(order, stays, strict=True):
        if not stay:
            moves += _move_after(graph, previous, node)
        previous = node
    return moves


def _move_after(graph: Graph, previous: Node | None, node: Node) -> int:
    """Put `node` right after `previous` (first when None); return 1 if it moved."""
    if previous is None:
        first: Node = next(iter(graph.nodes))
        if first is node:
            return 0
        first.prepend(node)
        return 1
    if previous.next is node:
        return 0
    previous.append(node)
    return 1
