"""Graphs as source, for the oracle's repros (spec chapter 08, DIF-8).

`graph_source(gm, inputs)` gives statements that rebuild `gm` with torch.fx and seeded random
inputs of the same shapes, dtypes, devices (drawn on the CPU, then moved: the same numbers on
every device, FIL-16) and requires_grad, so the repro of a graph-level divergence
is a plain script. Targets and callable constants are written as importable names
(`target_expr`); a node, constant or input that cannot be written (get_attr, call_module, a
target with no importable name, an input that is not a float tensor or a number) makes the
graph `Unwritable`, and `graph_source` gives None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.fx

from reference.names import qualified_name

Node = torch.fx.Node


class Unwritable(Exception):
    """A target or constant has no importable name: the graph cannot be written as source."""


def graph_source(gm: torch.fx.GraphModule, inputs: Sequence[Any]) -> str | None:
    """Statements that rebuild `gm` as `gm` with torch.fx and seeded random `inputs` of the
    same shapes, dtypes, devices and requires_grad; they need `torch`, `operator` and `builtins`
    imported. None when a node cannot be written (get_attr, call_module, an unnamed target)."""
    names = {n: f"n{i}" for i, n in enumerate(gm.graph.nodes)}
    lines = ["g = torch.fx.Graph()"]
    try:
        for k, node in enumerate(n for n in gm.graph.nodes if n.op == "placeholder"):
            lines.append(f"{names[node]} = g.placeholder('x{k}')")
        for node in gm.graph.nodes:
            lines += _build_line(node, names)
        values = [_input_expr(v) for v in inputs]
    except Unwritable:
        return None
    lines += ["gm = torch.fx.GraphModule(torch.nn.Module(), g)", "_g = torch.Generator()"]
    lines += ["_g.manual_seed(0)", "inputs = (" + "".join(f"{v}, " for v in values) + ")"]
    return "\n".join(lines) + "\n"


def _build_line(node: Node, names: Mapping[Node, str]) -> list[str]:
    args, kwargs = _expr(node.args, names), _expr(dict(node.kwargs), names)
    match node.op:
        case "placeholder":
            return []
        case "output":
            return [f"g.output({_expr(node.args[0], names)})"]
        case "call_function":
            target = target_expr(node.target)
            return [f"{names[node]} = g.call_function({target}, {args}, {kwargs})"]
        case "call_method":
            return [f"{names[node]} = g.call_method({node.target!r}, {args}, {kwargs})"]
    raise Unwritable(node.op)


def target_expr(target: Any) -> str:
    """An expression that evaluates to `target` (`torch.sin`, `torch.ops.aten.add.Tensor`)."""
    import builtins
    import operator

    text = qualified_name(target)
    if isinstance(target, torch._ops.OpOverload | torch._ops.OpOverloadPacket):
        text = f"torch.ops.{text}"
    roots = {"torch": torch, "operator": operator, "builtins": builtins}
    head, *rest = text.split(".")
    found: Any = roots.get(head)
    for part in rest:
        found = getattr(found, part, None)
    if found is None or found != target:
        raise Unwritable(text)
    return text


def _expr(value: Any, names: Mapping[Node, str]) -> str:
    match value:
        case torch.fx.Node():
            return names[value]
        case tuple():
            return "(" + "".join(f"{_expr(v, names)}, " for v in value) + ")"
        case list():
            return "[" + ", ".join(_expr(v, names) for v in value) + "]"
        case dict():
            return "{" + ", ".join(f"{k!r}: {_expr(v, names)}" for k, v in value.items()) + "}"
        case slice():
            return f"slice({_expr((value.start, value.stop, value.step), names)[1:-1]})"
    return _constant_expr(value)


def _constant_expr(value: Any) -> str:
    match value:
        case float() if value != value or value in (float("inf"), float("-inf")):
            return f"float({str(value)!r})"
        case None | bool() | int() | float() | str():
            return repr(value)
        case torch.dtype() | torch.memory_format() | torch.layout():
            return str(value)
        case torch.device():
            return f"torch.device({str(value)!r})"
        case _ if callable(value):
            return target_expr(value)
    raise Unwritable(type(value).__name__)


def _input_expr(value: Any) -> str:
    if isinstance(value, torch.SymInt):  # a size input of a dynamic graph: its hint
        value = value.node.hint
    if isinstance(value, bool | int | float):
        return repr(value)
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        raise Unwritable(type(value).__name__)
    dims = "".join(f"{d}, " for d in value.shape)
    moved = "" if value.device.type == "cpu" else f".to({_constant_expr(value.device)})"
    grad = ".requires_grad_()" if value.requires_grad else ""
    return f"torch.randn(({dims}), generator=_g, dtype={value.dtype}){moved}{grad}"
