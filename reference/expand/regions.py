"""Region finding on an fx graph: the torch-facing side of the expansion (chapter 02, EXP).

`search_regions(graph, buckets)` expands the buckets of key-equal nodes over `graph` and keeps
the whole `Expansion` (every step and refusal) for reports and `fxoracle explain`;
`find_identical_regions(graph, tracker)` returns torch's shape, `list[list[list[Node]]]`: groups
(latest first), regions (region 0 is the representative), nodes (corresponding positions are
key-equal).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch.fx

from reference.errors import expect, expect_method
from reference.expand.graph_view import GraphView, view_of_graph
from reference.expand.lockstep import Expansion, expand
from reference.fx_helpers import NodeIndex

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

    view: GraphView
    nodes: tuple[Node, ...]
    expansion: Expansion

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
    return RegionSearch(view, tuple(nodes), expand(view, fast=fast))


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
