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
from typing import Any

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
    found = copy_graph(gm.graph, gm, type(gm).__name__)
    found.gm.meta = dict(gm.meta)
    return found


def copy_graph(
    graph: torch.fx.Graph, root: torch.nn.Module | dict[str, Any], class_name: str = "Copy"
) -> GraphCopy:
    """A graph module over a node-for-node copy of `graph`, its attributes taken from `root`;
    `graph` itself is left alone (its `owning_module` included)."""
    copy = torch.fx.Graph()
    copy._codegen = graph._codegen  # how inputs and outputs are (un)flattened
    nodes: dict[Node, Node] = {}
    for old in graph.nodes:
        nodes[old] = copy.node_copy(old, nodes.__getitem__)
    _keep_naming_history(graph, copy)
    copied = torch.fx.GraphModule(root, copy, class_name=class_name)
    children = root.named_children() if isinstance(root, torch.nn.Module) else root.items()
    for name, child in children:
        if isinstance(child, torch.fx.GraphModule) and "." not in name:
            copied.register_module(name, copy_graph_module(child).gm)
    return GraphCopy(copied, nodes)


def _keep_naming_history(graph: torch.fx.Graph, copy: torch.fx.Graph) -> None:
    """The copy names new nodes as the original would: names the original once gave (to
    nodes since renamed or erased) stay taken, and suffix counters continue where they were.
    Passes on the copy then create exactly the node names they create on the original."""
    ours, theirs = copy._graph_namespace, graph._graph_namespace
    ours._used_names |= theirs._used_names
    for base, count in theirs._base_count.items():
        ours._base_count[base] = max(ours._base_count.get(base, 0), count)
