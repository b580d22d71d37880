"""Bodies of higher-order ops: graph modules a region reads through `get_attr` (spec chapter 03,
RPL-20).

`autograd_function_apply`, activation checkpointing, `cond` and nested `invoke_subgraph` take
their bodies as `get_attr` nodes of graph modules. Such a node is not a value: it cannot be an
`invoke_subgraph` operand (torch's runtime takes tensors, ints, SymInts, generators, script
and opaque objects only, RPL-21), so
the outlined subgraph fetches the representative's body itself, and every other region must read
the same body or one that computes the same thing. `same_body(a, b)` decides the latter
structurally: node for node, the same op, target and constants, with node arguments by position
(Dynamo names a body's placeholders after the caller's values, so names differ between calls).
"""

from __future__ import annotations

from collections.abc import Hashable

import torch
import torch.fx

from reference.fx_helpers import arg_key, attribute, target_name

Node = torch.fx.Node


def is_body(node: Node) -> bool:
    """A `get_attr` of a module (a higher-order op's body), not of a tensor: resolved through
    the graph's owning module, else told by its lack of a tensor example value."""
    if node.op != "get_attr":
        return False
    owner = node.graph.owning_module
    if owner is not None:
        return isinstance(attribute(owner, str(node.target)), torch.nn.Module)
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
    found: list[Hashable] = []
    for node in nodes:
        target: Hashable = target_name(node)
        if node.op == "placeholder":
            target = ""  # named after the caller's values
        elif node.op == "get_attr":
            child = attribute(gm, str(node.target))
            target = body_key(child) if isinstance(child, torch.fx.GraphModule) else target
        args = arg_key((node.args, node.kwargs), lambda n: ("node", index[n]))
        found.append((node.op, target, args))
    return tuple(found)
