"""Graph helpers the obligations share: every graph module of a module tree, the graph module a
node calls, and a node's value where metadata is missing (spec chapter 06)."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any

import torch
import torch.fx

from reference.fx_helpers import attribute, example_value
from reference.names import INVOKE

Node = torch.fx.Node


def graph_modules(gm: torch.fx.GraphModule) -> Iterator[tuple[str, torch.fx.GraphModule]]:
    """`gm` and every graph module below it, with a `path.` prefix (`""` for `gm`)."""
    for name, module in gm.named_modules():
        if isinstance(module, torch.fx.GraphModule):
            yield (f"{name}." if name else ""), module


Call = tuple[torch.fx.GraphModule, list[Node]]


def called_module(module: torch.fx.GraphModule, node: Node) -> Call | None:
    """The callee and the node operands of a call of a graph module, else None."""
    if node.op == "call_function" and node.target is INVOKE and isinstance(node.args[0], Node):
        callee, operands = attribute(module, str(node.args[0].target)), node.args[2:]
    elif node.op == "call_module":
        callee, operands = attribute(module, str(node.target)), node.args
    else:
        return None
    if not isinstance(callee, torch.fx.GraphModule):
        return None
    return callee, [a for a in operands if isinstance(a, Node)]


def value_of(module: torch.fx.GraphModule, node: Node) -> Any:
    """The node's example value; for a call of a graph module without one (split_module leaves
    none), the value its callee returns, and a getitem's element of that."""
    found = example_value(node)
    if found is not None:
        return found
    if node.op == "call_module":
        callee = attribute(module, str(node.target))
        if isinstance(callee, torch.fx.GraphModule):
            output = next(n for n in callee.graph.nodes if n.op == "output")
            return _returned(callee, output.args[0])
    if node.op == "call_function" and node.target is operator.getitem:
        source, index = node.args[0], node.args[1]
        whole = value_of(module, source) if isinstance(source, Node) else None
        if isinstance(whole, tuple | list) and isinstance(index, int) and index < len(whole):
            return whole[index]
    return None


def _returned(callee: torch.fx.GraphModule, value: Any) -> Any:
    if isinstance(value, Node):
        return value_of(callee, value)
    if isinstance(value, tuple | list):
        return tuple(_returned(callee, v) for v in value)
    return None
