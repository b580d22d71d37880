"""A graph whose metadata lives on CUDA, moved to the CPU to be run where there is no CUDA
device (spec chapter 06, CHK-6): every device constant in its nodes' arguments, in every graph
of the module tree, becomes `cpu`, and its tensor attributes are moved. The verdict of a check
run this way says so.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx

from reference.graph_copy import copy_graph_module


def moved_to_cpu(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of `gm` that runs on the CPU (attributes moved, device arguments rewritten)."""
    copy = copy_graph_module(gm).gm.cpu()
    for module in copy.modules():
        if isinstance(module, torch.fx.GraphModule):
            for node in module.graph.nodes:
                node.args = torch.fx.node.map_aggregate(node.args, _cpu)
                node.kwargs = torch.fx.node.map_aggregate(node.kwargs, _cpu)
            module.recompile()
    return copy


def _cpu(value: Any) -> Any:
    if isinstance(value, torch.device) and value.type == "cuda":
        return torch.device("cpu")
    if isinstance(value, str) and (value == "cuda" or value.startswith("cuda:")):
        return "cpu"
    return value
