"""torch's own deduplication, run on fxoracle's capture (spec chapter 08, DIF-2).

The capture (`reference.dynamo.capture.capture(..., with_torch_tracker=True)`) keys every node with
torch's own `GraphRegionTracker` as well, live, while Dynamo builds the graph. `torch_regions`
asks that tracker for its region groups; `torch_dedup` runs torch's `apply_graph_deduplication`
on the captured graph through `reference.dynamo.drop_in.ModuleOutputGraph`, as Dynamo calls it: the
graph right before the pass, torch's tracker, subgraphs installed as `subgraph_<i>`. Nothing
Dynamo does after the pass hides a bug.
"""

from __future__ import annotations

from typing import Any, cast

import torch
import torch.fx

from checker.oracle.protocol import Buckets, CapturedGraph, DedupOutput, RegionGroups
from reference.dynamo.capture import Capture
from reference.dynamo.drop_in import ModuleOutputGraph
from reference.errors import FxOracleError
from reference.expand.regions import region_names

Node = torch.fx.Node


def torch_regions(graph: CapturedGraph) -> RegionGroups:
    """torch's `get_identical_regions` on the captured graph, as node names."""
    tracker = _tracker_of(graph)
    found = cast(list[list[list[Node]]], tracker.get_identical_regions(graph.gm.graph))
    return region_names(found)


def torch_buckets(graph: CapturedGraph) -> Buckets:
    """torch's buckets of key-equal nodes (two or more), as node names."""
    buckets = _tracker_of(graph).hash_to_duplicates.values()
    return tuple(tuple(n.name for n in b) for b in buckets if len(b) > 1)


def torch_dedup(graph: CapturedGraph) -> DedupOutput:
    """torch's pass on `graph` (a copy: edited in place), and what it used."""
    from torch._dynamo.graph_deduplication import apply_graph_deduplication

    groups, buckets = torch_regions(graph), torch_buckets(graph)
    apply_graph_deduplication(ModuleOutputGraph(graph.gm, _tracker_of(graph)))
    graph.gm.recompile()
    return DedupOutput(graph.gm, groups, None, buckets)


def _tracker_of(graph: CapturedGraph) -> Any:
    """torch's own tracker of the capture, which only fxoracle's `Capture` carries."""
    found = graph.torch_tracker if isinstance(graph, Capture) else None
    if found is None:
        raise FxOracleError(
            "this capture has no torch tracker: capture(..., with_torch_tracker=True)"
        )
    return found
