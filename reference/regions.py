"""Region finding on an fx graph: the torch-facing side of the expansion (chapter 02, EXP).

`find_identical_regions(graph, tracker)` returns torch's shape, `list[list[list[Node]]]`: groups
(latest first), regions (region 0 is the representative), nodes (corresponding positions are
key-equal). `search_regions` keeps the whole `Expansion` (every step and refusal) for reports
and `fxoracle explain`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch.fx

from reference.expand import Expansion, expand
from reference.model import GraphView, NodeIndex, view_of_graph
from reference.tracker import GraphRegionTracker

Node = torch.fx.Node


@dataclass(frozen=True, slots=True)
class RegionSearch:
    """A graph's view, its nodes by index, and the expansion over them."""

    view: GraphView
    nodes: tuple[Node, ...]
    expansion: Expansion

    def region_groups(self) -> list[list[list[Node]]]:
        return [
            [[self.nodes[i] for i in region] for region in group]
            for group in self.expansion.kept_regions()
        ]

    def names(self, indices: tuple[NodeIndex, ...]) -> list[str]:
        return [self.view.names[i] for i in indices]


def search_regions(graph: torch.fx.Graph, tracker: GraphRegionTracker) -> RegionSearch:
    """Expand `tracker`'s buckets over `graph` and keep every step (EXP-10)."""
    view, nodes = view_of_graph(graph, tracker.key_to_duplicates.values())
    return RegionSearch(view, tuple(nodes), expand(view))


def find_identical_regions(
    graph: torch.fx.Graph, tracker: GraphRegionTracker
) -> list[list[list[Node]]]:
    """Region groups of `graph`, in torch 2.13's shape and group order (EXP-1, EXP-2, EXP-9)."""
    return search_regions(graph, tracker).region_groups()
