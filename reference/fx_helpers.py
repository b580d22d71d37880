"""fx helpers shared by every part of fxoracle: a node's example value, its flat node
arguments, the object a `get_attr` or `call_module` target names, and the key of a constant.

One implementation each, so that the reference, the checker and the oracle read a graph the same
way.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, NewType

import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensor

from reference.names import constant_text, qualified_name

NodeIndex = NewType("NodeIndex", int)  # a node's position in its graph's node order

Node = torch.fx.Node


def example_value(node: Node) -> Any:
    """A node's example value: `example_value` (Dynamo) or `val` (export), else None."""
    return node.meta.get("example_value", node.meta.get("val"))


def grad_modes(graph: torch.fx.Graph, initial: bool = True) -> dict[Node, bool]:
    """Whether grad mode is on at each node: `initial` until the graph's own
    `_set_grad_enabled(b)` switches it (a switch node runs in the mode it sets)."""
    mode, found = initial, {}
    for node in graph.nodes:
        if node.op == "call_function" and node.target is torch._C._set_grad_enabled:
            mode = bool(node.args[0])
        found[node] = mode
    return found


def flat_node_args(node: Node) -> list[Node]:
    """Node arguments in `map_arg` order (args, then kwargs in insertion order), repeats kept.

    Written-argument positions index this list, as torch's tracker records them (EFF-1).
    """
    found: list[Node] = []
    torch.fx.map_arg((node.args, node.kwargs), found.append)
    return found


def unique_node_args(node: Node) -> list[Node]:
    """`flat_node_args` without repeats, first occurrence kept: `all_input_nodes` order,
    the order in which the expansion's backward BFS queues a node's arguments.

    fx keeps exactly this list up to date as `all_input_nodes`, so it is read, not rebuilt.
    """
    return node.all_input_nodes


def target_name(node: Node) -> str:
    """A node's target as text, never an address: `qualified_name` for callables, else the
    string (a method name, an attribute path)."""
    target = node.target
    return target if isinstance(target, str) else qualified_name(target)


def attribute(root: torch.nn.Module | Mapping[str, Any], target: str) -> Any:
    """The object a dotted `get_attr`/`call_module` target names below `root` (a module, or a
    Dynamo `nn_modules` mapping of top-level names), or None when there is none."""
    head, _, rest = target.partition(".")
    found: Any = root.get(head) if isinstance(root, Mapping) else getattr(root, head, None)
    for part in rest.split(".") if rest else ():
        found = getattr(found, part, None)
    return found


def const_key(value: Any) -> Hashable:
    """A hashable, deterministic key of a constant argument, `(kind, value)`: `constant_text`
    where there is one (floats by `repr`, so 0.5 and 2.0, and 0.1 and 0.1 + 1e-17, differ),
    symbolic scalars by expression, tensors by dtype and content when small, other callables by
    qualified name; an unhashable opaque object by its type alone."""
    text = constant_text(value)
    if text is not None:
        return text
    if isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool):
        return (type(value).__name__, str(value.node.expr))
    if isinstance(value, torch.Tensor):
        small = value.numel() <= 64 and not value.is_meta and not isinstance(value, FakeTensor)
        content = tuple(value.detach().flatten().tolist()) if small else tuple(value.shape)
        return ("tensor", (str(value.dtype), content))
    if callable(value):
        return ("callable", qualified_name(value))
    try:
        return ("opaque", (type(value).__qualname__, hash(value), value))
    except TypeError:  # unhashable: compared by type only (documented in CHK-3)
        return ("opaque", type(value).__qualname__)


def arg_key(arg: Any, node_key: Any) -> Hashable:
    """The key of an argument structure: each node replaced by `node_key(node)`, containers
    with their kind and structure, constants by `const_key`."""
    if isinstance(arg, Node):
        key: Hashable = node_key(arg)
        return key
    if isinstance(arg, tuple | list):
        return (type(arg).__name__, tuple(arg_key(a, node_key) for a in arg))
    if isinstance(arg, dict):
        items = sorted(arg.items(), key=lambda kv: str(kv[0]))
        return ("dict", tuple((str(k), arg_key(v, node_key)) for k, v in items))
    if isinstance(arg, slice):
        parts = (arg.start, arg.stop, arg.step)
        return ("slice", tuple(arg_key(p, node_key) for p in parts))
    return const_key(arg)
