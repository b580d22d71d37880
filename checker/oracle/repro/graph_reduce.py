"""Shrinking a graph (spec chapter 08, DIF-7): the removable units are call nodes with a node
input; a removed node's uses take its first input."""

from __future__ import annotations

from collections.abc import Callable, Collection

import torch
import torch.fx

from checker.oracle.repro.ddmin import BUDGET, ddmin
from reference.graph_copy import copy_graph_module


def shrink_graph(
    gm: torch.fx.GraphModule, keeps: Callable[[torch.fx.GraphModule], bool], budget: int = BUDGET
) -> torch.fx.GraphModule:
    """The smallest graph found that `keeps`: removable are call nodes with a node input."""
    names = [n.name for n in gm.graph.nodes if n.op.startswith("call") and n.all_input_nodes]
    kept = ddmin(names, lambda k: keeps(without_nodes(gm, set(names) - set(k))), budget)
    return without_nodes(gm, set(names) - set(kept))


def without_nodes(gm: torch.fx.GraphModule, names: Collection[str]) -> torch.fx.GraphModule:
    """A copy of `gm` without the nodes named `names`; their uses take their first input."""
    copy = copy_graph_module(gm).gm
    for node in reversed(list(copy.graph.nodes)):
        if node.name in names:
            node.replace_all_uses_with(node.all_input_nodes[0])
            copy.graph.erase_node(node)
    copy.recompile()
    return copy
