"""Plain typed graph data for the expansion (spec chapter 02).

The expansion works on a `GraphView`: nodes by position in graph order (`NodeIndex`, which is
also the topological rank), their unique node arguments, their users, their op, the buckets of
key-equal nodes and the bucket each node counts as while regions grow. Nothing here holds an
`fx.Node`, so the algorithms can be unit- and property-tested on hand-made views without
tracing a model.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import NewType, cast

import torch.fx

from reference.errors import FxOracleError
from reference.fast.expand import view_parts
from reference.fx_helpers import NodeIndex, unique_node_args

BucketId = NewType("BucketId", int)
Args = tuple[tuple[NodeIndex, ...], ...]  # per node: positions (its arguments, its users)
BucketOf = tuple[BucketId | None, ...]  # per node: the bucket it counts as, None for none


@dataclass(frozen=True, slots=True)
class GraphView:
    """A graph as positions: `args[i]` are node i's unique node arguments in `all_input_nodes`
    order (the order the backward BFS queues them); `buckets[b]` the members of bucket b;
    `bucket_of[i]` the bucket node i counts as (None: it is identical to no other node, TRK-12)."""

    names: tuple[str, ...]
    ops: tuple[str, ...]
    args: tuple[tuple[NodeIndex, ...], ...]
    users: tuple[tuple[NodeIndex, ...], ...]
    buckets: tuple[tuple[NodeIndex, ...], ...]
    bucket_of: tuple[BucketId | None, ...]

    def __len__(self) -> int:
        return len(self.names)


def make_view(
    names: tuple[str, ...],
    ops: tuple[str, ...],
    args: tuple[tuple[NodeIndex, ...], ...],
    buckets: tuple[tuple[NodeIndex, ...], ...],
    same: Mapping[NodeIndex, BucketId] | None = None,
) -> GraphView:
    """Build a view from arguments and buckets, deriving the users and `bucket_of`.

    `same`, when given, is the bucket each node counts as while regions grow (a node missing
    from it is identical to no other, TRK-12); by default a node counts as its bucket's.
    Raises `FxOracleError` when an argument does not precede its user (the graph is not in
    topological order, so positions are not ranks).
    """
    if same is None:
        same = {m: BucketId(b) for b, members in enumerate(buckets) for m in members}
    positions = cast("list[NodeIndex]", list(range(len(names))))
    users: list[list[NodeIndex]] = [[] for _ in names]
    for i, node_args in zip(positions, args, strict=True):
        for a in node_args:
            if a >= i:
                raise FxOracleError(
                    f"graph is not topologically sorted: {names[i]} uses {names[a]}, "
                    "which comes after it"
                )
            users[a].append(i)
    bucket_of = tuple(map(same.get, positions))
    return GraphView(names, ops, args, tuple(map(tuple, users)), buckets, bucket_of)


def view_of_graph(
    graph: torch.fx.Graph,
    buckets: Sequence[Sequence[torch.fx.Node]],
    excluded: Collection[torch.fx.Node] = frozenset(),
    *,
    fast: bool = False,
) -> tuple[GraphView, list[torch.fx.Node]]:
    """The view of `graph` with `buckets` (each: members in tracking order); an `excluded` member
    counts as identical to no other node while regions grow (TRK-12).

    Members that are no longer in the graph are dropped. Returns the view and the nodes by index.
    `fast=True` builds it with `reference.fast.expand.view_parts` (EXP-11).
    """
    nodes = list(graph.nodes)
    names, ops = tuple([n.name for n in nodes]), tuple([n.op for n in nodes])
    parts = view_parts(nodes, buckets, excluded) if fast else None
    if parts is not None:
        return GraphView(names, ops, *cast("tuple[Args, Args, Args, BucketOf]", parts)), nodes
    index = dict(zip(nodes, cast("list[NodeIndex]", list(range(len(nodes)))), strict=True))
    kept: list[tuple[NodeIndex, ...]] = []
    same: dict[NodeIndex, BucketId] = {}
    for members in buckets:
        found = tuple([index[m] for m in members if m in index])
        if found:
            same.update(dict.fromkeys(found, BucketId(len(kept))))
            kept.append(found)
    for node in index.keys() & excluded:
        same.pop(index[node], None)
    args = tuple(map(partial(_arg_positions, index), nodes))
    return make_view(names, ops, args, tuple(kept), same), nodes


def _arg_positions(
    index: Mapping[torch.fx.Node, NodeIndex], node: torch.fx.Node
) -> tuple[NodeIndex, ...]:
    """`node`'s unique node arguments (`fx_helpers.unique_node_args`) as positions."""
    args = unique_node_args(node)
    outside = [a.name for a in args if a not in index]
    if outside:
        raise FxOracleError(f"node {node.name} uses {outside[0]}, which is not in the graph")
    return tuple([index[a] for a in args])
