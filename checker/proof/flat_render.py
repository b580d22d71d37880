"""Flat nodes as text for witnesses: `name = target(args)` (spec chapter 06, CHK-3, CHK-4)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator

from checker.proof.flat import NODE_MARK, FlatGraph


def render(flat: FlatGraph, index: int) -> str:
    """`name = target(args)` with node arguments by flat name (for witnesses)."""
    node = flat.nodes[index]
    if node.op == "placeholder":
        return f"{node.name} = {node.target}"
    names = iter(flat.nodes[i].name for i in node.inputs)
    return f"{node.name} = {node.target}{render_consts(node.consts, names)}"


def render_consts(consts: Hashable, names: Iterator[str]) -> str:
    """`(a, 2, dim=0)` from a node's constants, markers replaced by the next names."""
    return "(" + ", ".join(render_parts(consts, names)) + ")"


def render_parts(consts: Hashable, names: Iterator[str]) -> list[str]:
    """Each argument of `render_consts`, keyword arguments as `name=value`."""
    assert isinstance(consts, tuple), "CHK-3: node constants are (args, kwargs)"
    args, kwargs = consts
    parts = [_render(a, names) for a in args[1]]
    return parts + [f"{k}={_render(v, names)}" for k, v in kwargs[1]]


def _render(key: Hashable, names: Iterator[str]) -> str:
    assert isinstance(key, tuple), "CHK-3: keys are tuples"
    if key == NODE_MARK:
        return next(names)
    kind, value = key
    if kind in ("tuple", "list"):
        inner = ", ".join(_render(v, names) for v in value)
        return f"({inner})" if kind == "tuple" else f"[{inner}]"
    if kind == "slice":
        return "slice(" + ", ".join(_render(v, names) for v in value) + ")"
    if kind in ("opaque", "tensor", "dict"):
        return f"<{kind}>"
    return str(value)
