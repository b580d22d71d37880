"""Copy a graph module before an in-place pass, so the checker can compare the original with
the result (spec chapter 06, CHK-14).

`copy_graph_module(gm)` gives a new `GraphModule` whose graph is a node-for-node copy of `gm`'s
(same names, same order, each node's `meta` copied shallowly: example values are shared, not
re-faked), and whose `GraphModule` children are copied the same way, recursively. Parameters
and other attributes are shared: passes move and rewire nodes, they do not edit weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch
import torch.fx

Node = torch.fx.Node


@dataclass(frozen=True, slots=True, eq=False)
class GraphCopy:
    """The copied module and, for every node of the original top-level graph, its copy."""

    gm: torch.fx.GraphModule
    nodes: Mapping[Node, Node]


def copy_graph_module(gm: torch.fx.GraphModule) -> GraphCopy:
    """A copy of `gm` that survives an in-place pass on `gm` (CHK-14)."""
    graph = torch.fx.Graph()
    graph._codegen = gm.graph._codegen  # how inputs and outputs are (un)flattened
    nodes: dict[Node, Node] = {}
    for old in gm.graph.nodes:
        nodes[old] = graph.node_copy(old, nodes.__getitem__)
    copied = torch.fx.GraphModule(gm, graph, class_name=type(gm).__name__)
    for name, child in gm.named_children():
        if isinstance(child, torch.fx.GraphModule):
            copied.register_module(name, copy_graph_module(child).gm)
    copied.meta = dict(gm.meta)
    return GraphCopy(copied, nodes)
