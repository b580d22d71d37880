"""Bodies of higher-order ops: graph modules a region reads through `get_attr` (spec chapter 03,
RPL-20).

`autograd_function_apply`, activation checkpointing, `cond` and nested `invoke_subgraph` take
their bodies as `get_attr` nodes of graph modules. Such a node is not a value: it cannot be an
`invoke_subgraph` operand (torch's runtime takes tensors, ints, SymInts and generators only), so
the outlined subgraph fetches the representative's body itself, and every other region must read
the same body or one that computes the same thing. `same_body(a, b)` decides the latter
structurally: node for node, the same op, target and constants, with node arguments by position
(Dynamo names a body's placeholders after the caller's values, so names differ between calls).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

import torch
import torch.fx

from reference.names import qualified_name

Node = torch.fx.Node


def resolver(root: torch.nn.Module | Mapping[str, Any]) -> Callable[[str], object]:
    """`target -> attribute` of a module (dotted paths) or a Dynamo `nn_modules` mapping."""
    if isinstance(root, Mapping):
        return lambda target: root.get(target)

    def find(target: str) -> object:
        found: object = root
        for part in target.split("."):
            found = getattr(found, part, None)
        return found

    return find


def is_body(node: Node) -> bool:
    """A `get_attr` of a module (a higher-order op's body), not of a tensor: resolved through
    the graph's owning module, else told by its lack of a tensor example value."""
    if node.op != "get_attr":
        return False
    owner = node.graph.owning_module
    if owner is not None:
        return isinstance(resolver(owner)(str(node.target)), torch.nn.Module)
    value = node.meta.get("example_value", node.meta.get("val"))
    return not isinstance(value, torch.Tensor)


def same_body(a: object, b: object) -> bool:
    """Whether two attributes are the same object, or graph modules computing the same thing."""
    if a is b:
        return True
    if not isinstance(a, torch.fx.GraphModule) or not isinstance(b, torch.fx.GraphModule):
        return False
    return body_key(a) == body_key(b)


def body_key(gm: torch.fx.GraphModule) -> Hashable:
    """What a body computes, as a value: per node its op, target and constants, node arguments
    by position; a nested body by its own key. Names are left out (RPL-20)."""
    nodes = list(gm.graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    find = resolver(gm)
    found: list[Hashable] = []
    for node in nodes:
        target: Hashable = (
            node.target if isinstance(node.target, str) else qualified_name(node.target)
        )
        if node.op == "placeholder":
            target = ""  # named after the caller's values
        elif node.op == "get_attr":
            child = find(str(node.target))
            target = body_key(child) if isinstance(child, torch.fx.GraphModule) else target
        args = torch.fx.map_arg((node.args, node.kwargs), lambda n: ("node", index[n]))
        found.append((node.op, target, repr(args)))
    return tuple(found)
