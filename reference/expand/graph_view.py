"""Plain typed graph data for the pure algorithms (spec chapter 00).

The expansion works on a `GraphView`: nodes by position in graph order (`NodeIndex`, which is
also the topological rank), their unique node arguments, their users, their op and the bucket
their key falls in. Nothing here holds an `fx.Node`, so the algorithms can be unit- and
property-tested on hand-made views without tracing a model.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NewType, cast

import torch.fx

from reference.errors import FxOracleError
from reference.fx_helpers import NodeIndex, unique_node_args

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
    bucket: list[int | None] = [None] * len(names)
    if same is None:
        same = {m: b for b, members in enumerate(buckets) for m in members}
    for m, b in same.items():
        bucket[m] = b
    return _assemble(names, ops, args, buckets, bucket)


def _assemble(
    names: tuple[str, ...],
    ops: tuple[str, ...],
    args: tuple[tuple[NodeIndex, ...], ...],
    buckets: tuple[tuple[NodeIndex, ...], ...],
    bucket: list[int | None],
) -> GraphView:
    """The view, with each node's users derived from the arguments (checked to come first)."""
    users: list[list[int]] = [[] for _ in names]
    for i, node_args in enumerate(cast("Sequence[tuple[int, ...]]", args)):
        for a in node_args:
            if a >= i:
                raise FxOracleError(
                    f"graph is not topologically sorted: {names[i]} uses {names[a]}, "
                    "which comes after it"
                )
            users[a].append(i)
    return GraphView(
        names,
        ops,
        args,
        cast("tuple[tuple[NodeIndex, ...], ...]", tuple(map(tuple, users))),
        cast("tuple[BucketId | None, ...]", tuple(bucket)),
        buckets,
    )


def view_of_graph(
    graph: torch.fx.Graph,
    buckets: Iterable[Sequence[torch.fx.Node]],
    excluded: Collection[torch.fx.Node] = frozenset(),
) -> tuple[GraphView, list[torch.fx.Node]]:
    """The view of `graph` with `buckets` (each: members in tracking order); an `excluded` member
    counts as identical to no other node while regions grow (TRK-12).

    Members that are no longer in the graph are dropped. Returns the view and the nodes by index.
    """
    nodes = list(graph.nodes)
    index = cast("dict[torch.fx.Node, NodeIndex]", dict(zip(nodes, range(len(nodes)), strict=True)))
    position = index.get
    kept: list[tuple[NodeIndex, ...]] = []
    bucket: list[int | None] = [None] * len(nodes)
    found: tuple[NodeIndex, ...]
    for members in buckets:
        if len(members) == 1:  # most buckets: no list to build
            only = position(members[0])
            found = () if only is None else (only,)
        else:
            found = tuple([p for p in map(position, members) if p is not None])
        if found:
            for p in found:
                bucket[p] = len(kept)
            kept.append(found)
    for out in map(position, excluded):
        if out is not None:
            bucket[out] = None
    names = tuple([n.name for n in nodes])
    view = _assemble(names, tuple([n.op for n in nodes]), _arg_positions(nodes, index),
                     tuple(kept), bucket)  # fmt: skip
    return view, nodes


def _arg_positions(
    nodes: Sequence[torch.fx.Node], index: Mapping[torch.fx.Node, NodeIndex]
) -> tuple[tuple[NodeIndex, ...], ...]:
    """Each node's unique node arguments (`fx_helpers.unique_node_args`) as positions. fx keeps them
    as the keys of `_input_nodes`, read here directly: this runs once per node per search."""
    position = index.__getitem__
    try:
        return tuple([tuple(map(position, n._input_nodes)) for n in nodes])
    except KeyError:
        user, arg = next((n, a) for n in nodes for a in unique_node_args(n) if a not in index)
        raise FxOracleError(
            f"node {user.name} uses {arg.name}, which is not in the graph"
        ) from None
