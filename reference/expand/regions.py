"""Region finding on an fx graph: the torch-facing side of the expansion (chapter 02, EXP).

`search_regions(graph, buckets)` expands the buckets of key-equal nodes over `graph` and keeps
the whole `Expansion` (every step and refusal) for reports and `fxoracle explain`;
`find_identical_regions(graph, tracker)` returns torch's shape, `list[list[list[Node]]]`: groups
(latest first), regions (region 0 is the representative), nodes (corresponding positions are
key-equal). `view_of_graph` builds the `GraphView` the expansion works on from an fx graph.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol, cast

import torch.fx

from reference.arguments import expect, expect_method
from reference.errors import FxOracleError
from reference.expand import lockstep
from reference.fast.expand import view_parts
from reference.fx_helpers import NodeIndex, unique_node_args

Node = torch.fx.Node


@dataclass(frozen=True, slots=True, eq=False)
class Buckets:
    """What region growth reads from a tracker (TRK-12).

    `groups` are the buckets of key-equal nodes in tracking order: each with two or more members
    in the graph starts a region group. While regions grow, two nodes are identical when they
    are members of one bucket and neither is `excluded`. torch reads the first from
    `hash_to_duplicates` and the second from `node_to_duplicates`, so a node removed from
    `node_to_duplicates` still starts a group but never joins a region (upstream
    `test_tuple_inputs`).
    """

    groups: tuple[tuple[Node, ...], ...]
    excluded: frozenset[Node] = frozenset()


class Tracked(Protocol):
    """A tracker as region finding sees it (`reference.GraphRegionTracker` is one)."""

    def buckets(self) -> Buckets: ...


@dataclass(frozen=True, slots=True)
class RegionSearch:
    """A graph's view, its nodes by index, and the expansion over them."""

    view: lockstep.GraphView
    nodes: tuple[Node, ...]
    expansion: lockstep.Expansion

    def region_groups(self) -> list[list[list[Node]]]:
        kept = self.expansion.kept_regions()
        return [[[self.nodes[i] for i in region] for region in group] for group in kept]

    def names(self, indices: tuple[NodeIndex, ...]) -> list[str]:
        return [self.view.names[i] for i in indices]

    def group_names(self) -> tuple[tuple[tuple[str, ...], ...], ...]:
        """The kept region groups as node names."""
        return region_names(self.region_groups())


def search_regions(graph: torch.fx.Graph, buckets: Buckets, *, fast: bool = False) -> RegionSearch:
    """Expand `buckets` over `graph` and keep every step (EXP-10); `fast=True` takes the
    speed-ups of `reference.fast.expand` (the same result, EXP-11)."""
    view, nodes = view_of_graph(graph, buckets.groups, buckets.excluded, fast=fast)
    return RegionSearch(view, tuple(nodes), lockstep.expand(view, fast=fast))


def find_identical_regions(
    graph: torch.fx.Graph, tracker: Tracked, *, fast: bool = False
) -> list[list[list[Node]]]:
    """Region groups of `graph`, in torch's shape and group order (EXP-1, EXP-2, EXP-9);
    `fast=True` as in `search_regions`."""
    expect(graph, torch.fx.Graph, "find_identical_regions: graph")  # FIL-6
    expect_method(tracker, "buckets", "find_identical_regions: tracker")
    return search_regions(graph, tracker.buckets(), fast=fast).region_groups()


def region_names(
    groups: Sequence[Sequence[Sequence[Node]]],
) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """Region groups of nodes as region groups of node names."""
    return tuple(tuple(tuple(n.name for n in region) for region in group) for group in groups)


def view_of_graph(
    graph: torch.fx.Graph,
    buckets: Sequence[Sequence[torch.fx.Node]],
    excluded: Collection[torch.fx.Node] = frozenset(),
    *,
    fast: bool = False,
) -> tuple[lockstep.GraphView, list[torch.fx.Node]]:
    """The view of `graph` with `buckets` (each: members in tracking order); an `excluded` member
    counts as identical to no other node while regions grow (TRK-12).

    Members that are no longer in the graph are dropped. Returns the view and the nodes by index.
    `fast=True` builds it with `reference.fast.expand.view_parts` (EXP-11).
    """
    nodes = list(graph.nodes)
    names, ops = tuple([n.name for n in nodes]), tuple([n.op for n in nodes])
    parts = view_parts(nodes, buckets, excluded) if fast else None
    if parts is not None:
        typed = cast("tuple[lockstep.Args, lockstep.Args, lockstep.Args, lockstep.BucketOf]", parts)
        return lockstep.GraphView(names, ops, *typed), nodes
    index = dict(zip(nodes, cast("list[NodeIndex]", list(range(len(nodes)))), strict=True))
    kept: list[tuple[NodeIndex, ...]] = []
    same: dict[NodeIndex, lockstep.BucketId] = {}
    for members in buckets:
        found = tuple([index[m] for m in members if m in index])
        if found:
            same.update(dict.fromkeys(found, lockstep.BucketId(len(kept))))
            kept.append(found)
    for node in index.keys() & excluded:
        same.pop(index[node], None)
    args = tuple(map(partial(_arg_positions, index), nodes))
    return lockstep.make_view(names, ops, args, tuple(kept), same), nodes


def _arg_positions(
    index: Mapping[torch.fx.Node, NodeIndex], node: torch.fx.Node
) -> tuple[NodeIndex, ...]:
    """`node`'s unique node arguments (`fx_helpers.unique_node_args`) as positions."""
    args = unique_node_args(node)
    outside = [a.name for a in args if a not in index]
    if outside:
        raise FxOracleError(f"node {node.name} uses {outside[0]}, which is not in the graph")
    return tuple([index[a] for a in args])
