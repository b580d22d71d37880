"""Mutated argument positions read from an already captured graph (spec chapter 01, TRK-8).

Live capture learns mutation from version counters. Offline, the op tells: an aten overload's
schema marks written arguments (`Tensor(a!)`), a method whose name ends in `_` writes `self`,
`operator.setitem` and the in-place operators (`iadd`, ...) write their first argument,
`inplace=True` writes the input, and `out=` writes its tensors. A position indexes the node's
flat node arguments (`keys.flat_node_args`), as torch's tracker records it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch
import torch.fx

from reference.names import qualified_name

_INPLACE_OPERATORS: frozenset[Callable[..., object]] = frozenset(
    {
        operator.setitem,
        operator.iadd,
        operator.isub,
        operator.imul,
        operator.itruediv,
        operator.ifloordiv,
        operator.imod,
        operator.ipow,
        operator.iand,
        operator.ior,
        operator.ixor,
        operator.ilshift,
        operator.irshift,
        operator.imatmul,
    }
)


def _node_count(value: Any) -> int:
    found: list[torch.fx.Node] = []
    torch.fx.map_arg(value, found.append)
    return len(found)


def _written_schema_args(target: Any) -> frozenset[str]:
    if not isinstance(target, torch._ops.OpOverload):
        return frozenset()
    return frozenset(
        a.name
        for a in target._schema.arguments
        if a.alias_info is not None and a.alias_info.is_write
    )


def _is_inplace_name(name: str) -> bool:
    return name.endswith("_") and not name.startswith("__")


WRITING_KWARGS = frozenset({"out", "inplace"})  # keyword arguments that make a node write


def target_may_write(target: Any) -> bool:
    """Whether a node with this target may write an argument whatever its keyword arguments
    (`WRITING_KWARGS` aside): `mutated_positions` is `()` for every node of any other target."""
    if _written_schema_args(target) or target in _INPLACE_OPERATORS:
        return True
    name = target if isinstance(target, str) else qualified_name(target)
    return _is_inplace_name(name.rsplit(".", 1)[-1])


def _writes_first(node: torch.fx.Node) -> bool:
    if node.op == "call_method" and isinstance(node.target, str):
        return _is_inplace_name(node.target)
    if node.op != "call_function":
        return False
    if node.target in _INPLACE_OPERATORS or node.kwargs.get("inplace") is True:
        return True
    name = qualified_name(node.target)
    return name.startswith("torch.") and _is_inplace_name(name.rsplit(".", 1)[-1])


def mutated_positions(node: torch.fx.Node) -> tuple[int, ...]:
    """Positions in `flat_node_args(node)` that `node` writes, in increasing order (TRK-8)."""
    written = _written_schema_args(node.target) | {"out"}
    writes_first = _writes_first(node)
    if not writes_first and written.isdisjoint(node.kwargs) and len(written) == 1:
        return ()  # writes nothing: most nodes leave here, before counting arguments
    schema_names = _schema_names(node.target)
    positions: list[int] = []
    offset = 0
    for i, arg in enumerate(node.args):
        n = _node_count(arg)
        first = i == 0 and writes_first
        if n and (first or (i < len(schema_names) and schema_names[i] in written)):
            positions.extend(range(offset, offset + n))
        offset += n
    for name, arg in node.kwargs.items():
        n = _node_count(arg)
        if n and name in written:
            positions.extend(range(offset, offset + n))
        offset += n
    return tuple(positions)


def _schema_names(target: Any) -> tuple[str, ...]:
    if isinstance(target, torch._ops.OpOverload):
        return tuple(a.name for a in target._schema.arguments)
    return ()
