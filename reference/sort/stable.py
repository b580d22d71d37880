"""Stable topological sort (spec chapter 04, "Stable topological sort and ordering deps").

Contract: `stable_topological_sort(graph, additional_deps)` reorders `graph` in place into torch's
order (`_stable_topological_sort_impl` in `torch/_dynamo/graph_deduplication.py`, the same order
in 2.13-2.15; 2.15 computes it in linear time): nodes are visited in current order, a node waits
on its LAST unready dependency, a ready node is placed after the previously placed one and
re-queues its waiters in the order they started waiting, the output goes last (SRT-1..SRT-4).
When no order exists it raises `NoOrder` (an `FxOracleError` that is also an `AssertionError`,
what torch raises there) naming one cycle and leaves the graph untouched (SRT-5).

The algorithm is the pure `order_indices` over integer positions; `stable_topological_sort` is
a thin adapter that maps nodes to positions and applies the result as torch does. What torch's
sort lacks sits beside it: the cycle witness (`reference.sort.cycle`) and the trace of visits
(`reference.sort.trace`). With `fast=True` both take the speed-ups of `reference.fast.sort`
(the same order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from torch.fx import Graph, Node

from reference.fast.sort import LastUnready, on_longest_increasing
from reference.fx_helpers import unique_node_args
from reference.sort import inputs
from reference.sort.cycle import Cycle as Cycle  # re-exported: part of the sort's result
from reference.sort.cycle import NoOrder as NoOrder  # re-exported: what the sort raises
from reference.sort.cycle import waiting_cycle
from reference.sort.trace import SortStep as SortStep  # re-exported: what a trace sees
from reference.sort.trace import Trace


def order_indices(
    n: int, deps: Sequence[Sequence[int]], trace: Trace | None = None, *, fast: bool = False
) -> list[int] | Cycle:
    """torch's stable order of positions `0..n-1`, where `deps[i]` lists what `i` must follow,
    or the `Cycle` that leaves some unplaced.

    Duplicate entries in `deps[i]` count at their first occurrence (torch's `OrderedSet`).
    `trace`, when given, sees every visit (it changes nothing); `fast=True` finds each node's
    last unready dep with `reference.fast.sort.LastUnready` (the same order). SRT-1, SRT-2, SRT-5.
    """
    inputs.check_positions(n, deps)
    unique = [list(dict.fromkeys(own)) for own in deps]  # torch's `OrderedSet`
    last_unready = LastUnready(unique) if fast else partial(_last_unready, unique)
    placed = [False] * n
    waiting: dict[int, list[int]] = {}  # blocker -> the nodes waiting on it, in arrival order
    order: list[int] = []
    pending = list(range(n - 1, -1, -1))  # a stack: the next node to visit is last
    while pending:
        node = pending.pop()
        blocker = last_unready(node, placed)
        if blocker is not None:
            waiting.setdefault(blocker, []).append(node)
        else:
            placed[node] = True
            order.append(node)
            pending.extend(reversed(waiting.pop(node, [])))
        if trace is not None:
            trace(SortStep.of(node, blocker, pending, waiting, order))
    return order if len(order) == n else waiting_cycle(waiting)


def _last_unready(deps: list[list[int]], node: int, placed: list[bool]) -> int | None:
    """The last dep of `node` that is not placed yet, or None. SRT-2."""
    return next((dep for dep in reversed(deps[node]) if not placed[dep]), None)


def node_deps(node: Node, additional_deps: Mapping[Node, Sequence[Node]]) -> list[Node]:
    """What `node` must follow: unique flat args, then its extra deps not already listed. SRT-2."""
    return list(dict.fromkeys([*unique_node_args(node), *additional_deps.get(node, ())]))


def stable_topological_sort(
    graph: Graph, additional_deps: Mapping[Node, Sequence[Node]], *, fast: bool = False
) -> None:
    """Reorder `graph` in place into torch's stable order, the output node last; `fast=True`
    takes the speed-ups of `reference.fast.sort` (the same order, SRT-2, SRT-4).

    Raises `FxOracleError` (graph untouched) on a cycle, or when a node depends on the output
    node or on a node outside the graph (torch reports both as a failed sort). SRT-1..SRT-5.
    """
    inputs.check_sort_arguments(graph, additional_deps)
    body = [node for node in graph.nodes if node.op != "output"]
    position = {node: i for i, node in enumerate(body)}
    deps = {node: node_deps(node, additional_deps) for node in body}
    inputs.check_body_deps(deps, position)
    positions = [[position[dep] for dep in own] for own in deps.values()]
    result = order_indices(len(body), positions, fast=fast)
    if isinstance(result, Cycle):
        raise NoOrder.naming(result, [node.name for node in body])
    outputs = [node for node in graph.nodes if node.op == "output"]
    apply_order(graph, [body[i] for i in result] + outputs, fast=fast)


def apply_order(graph: Graph, order: Sequence[Node], *, fast: bool = False) -> int:
    """Reorder `graph`'s nodes into `order` in place; return how many nodes were moved.

    Each node is moved right after the one before it in `order` (the first to the front) unless
    it is there already (torch's cursor), so a sorted graph moves nothing (SRT-4). `fast=True`
    keeps the nodes on a longest subsequence already in relative order
    (`reference.fast.sort.on_longest_increasing`) and moves only the others: the same order,
    with the fewest moves.
    """
    rank = {node: i for i, node in enumerate(graph.nodes)}
    inputs.check_order(rank, order)
    stays = on_longest_increasing([rank[node] for node in order]) if fast else [False] * len(order)
    moves = 0
    for previous, node, stay in zip([None, *order], order, stays, strict=False):
        at = next(iter(graph.nodes)) if previous is None else previous.next  # where node goes
        if not stay and at is not node:
            at.prepend(node)  # `previous.append(node)` is `previous.next.prepend(node)`
            moves += 1
    return moves
