"""Plain typed graph data for the pure algorithms (spec chapter 00).

The expansion works on a `GraphView`: nodes by position in graph order (`NodeIndex`, which is
also the topological rank), their unique node arguments, their users, their op and the bucket
their key falls in. Nothing here holds an `fx.Node`, so the algorithms can be unit- and
property-tested on hand-made views without tracing a model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NewType

import torch.fx

from reference.errors import FxOracleError
from reference.keys import unique_node_args

NodeIndex = NewType("NodeIndex", int)
BucketId = NewType("BucketId", int)
GroupIndex = NewType("GroupIndex", int)


@dataclass(frozen=True, slots=True)
class GraphView:
    """A graph as positions: `args[i]` are node i's unique node arguments in BFS order."""

    names: tuple[str, ...]
    ops: tuple[str, ...]
    args: tuple[tuple[NodeIndex, ...], ...]
    users: tuple[tuple[NodeIndex, ...], ...]
    bucket: tuple[BucketId | None, ...]
    buckets: tuple[tuple[NodeIndex, ...], ...]

    def __len__(self) -> int:
        return len(self.names)


def make_view(
    names: tuple[str, ...],
    ops: tuple[str, ...],
    args: tuple[tuple[NodeIndex, ...], ...],
    buckets: tuple[tuple[NodeIndex, ...], ...],
    same: Mapping[NodeIndex, int] | None = None,
) -> GraphView:
    """Build a view from arguments and buckets, deriving users and the bucket of each node.

    `same`, when given, is the bucket each node counts as while regions grow (a node missing
    from it is identical to no other, TRK-12); by default a node counts as its bucket's.
    Raises `FxOracleError` when an argument does not precede its user (the graph is not in
    topological order, so positions are not ranks).
    """
    users: list[list[NodeIndex]] = [[] for _ in names]
    for i, node_args in enumerate(args):
        for a in node_args:
            if a >= i:
                raise FxOracleError(
                    f"graph is not topologically sorted: {names[i]} uses {names[a]}, "
                    "which comes after it"
                )
            users[a].append(NodeIndex(i))
    bucket: list[BucketId | None] = [None] * len(names)
    if same is None:
        same = {m: b for b, members in enumerate(buckets) for m in members}
    for m, b in same.items():
        bucket[m] = BucketId(b)
    return GraphView(
        names, ops, args, tuple(tuple(u) for u in users), tuple(bucket), tuple(buckets)
    )


def view_of_graph(
    graph: torch.fx.Graph,
    buckets: Iterable[Sequence[torch.fx.Node]],
    same: Mapping[torch.fx.Node, int] | None = None,
) -> tuple[GraphView, list[torch.fx.Node]]:
    """The view of `graph` with `buckets` (each: members in tracking order) and, if given,
    `same` (the bucket each node counts as while regions grow, by position in `buckets`).

    Members that are no longer in the graph are dropped. Returns the view and the nodes by index.
    """
    nodes = list(graph.nodes)
    index = {n: NodeIndex(i) for i, n in enumerate(nodes)}
    args = tuple(tuple(_position(index, n, a) for a in unique_node_args(n)) for n in nodes)
    kept = [tuple(index[m] for m in members if m in index) for members in buckets]
    renumber = {b: k for k, b in enumerate(b for b, members in enumerate(kept) if members)}
    positions = None
    if same is not None:
        positions = {index[n]: renumber[b] for n, b in same.items() if n in index and b in renumber}
    view = make_view(
        tuple(n.name for n in nodes),
        tuple(n.op for n in nodes),
        args,
        tuple(b for b in kept if b),
        positions,
    )
    return view, nodes


def _position(
    index: Mapping[torch.fx.Node, NodeIndex], user: torch.fx.Node, arg: torch.fx.Node
) -> NodeIndex:
    if arg not in index:
        raise FxOracleError(f"node {user.name} uses {arg.name}, which is not in the graph")
    return index[arg]
