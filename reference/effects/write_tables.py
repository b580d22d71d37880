"""The reviewed tables of writes no schema declares (spec chapter 09, EFF-9).

A few aten ops update arguments their schema does not mark `Tensor(a!)` (`native_batch_norm`'s
running statistics), and Dynamo leaves Python-level functions with no schema at all in its graphs
(`F.batch_norm`). These tables, reviewed against torch 2.13's kernels and
`torch.nn.functional`, say which arguments they write and when; everything else is told by its
schema, or by running it (`reference.effects.observed_writes`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.fx
import torch.nn.functional as F

Node = torch.fx.Node
Bound = Mapping[str, Any]
_aten = torch.ops.aten
_STATS = ("running_mean", "running_var")


def _flag(name: str, default: bool) -> Callable[[Bound], bool]:
    return lambda bound: bound.get(name, default) is True


def _always(bound: Bound) -> bool:
    return True


def _renorms(bound: Bound) -> bool:
    return bound.get("max_norm") is not None


# aten op packets that write arguments their schema does not mark: the written argument names,
# and when (from the bound arguments). Each updates the running statistics in place.
UNDECLARED: Mapping[object, tuple[tuple[str, ...], Callable[[Bound], bool]]] = {
    _aten.native_batch_norm: (_STATS, _flag("training", False)),
    _aten.cudnn_batch_norm: (_STATS, _flag("training", False)),
    _aten.miopen_batch_norm: (_STATS, _flag("training", False)),
    _aten.batch_norm: (_STATS, _flag("training", False)),
    _aten._batch_norm_impl_index: (_STATS, _flag("training", False)),
    _aten.instance_norm: (_STATS, _flag("use_input_stats", False)),
    _aten.batch_norm_update_stats: (_STATS, _always),
    _aten.batch_norm_gather_stats: (_STATS, _always),
    _aten.batch_norm_gather_stats_with_counts: (_STATS, _always),
}

# Python-level functions Dynamo leaves in graphs: the written parameter names, and when.
PYTHON_WRITES: Mapping[object, tuple[tuple[str, ...], Callable[[Bound], bool]]] = {
    F.batch_norm: (_STATS, _flag("training", False)),
    F.instance_norm: (_STATS, _flag("use_input_stats", True)),
    F.embedding: (("weight",), _renorms),
}


def schema_bound(op: torch._ops.OpOverload, args: Sequence[Any], kwargs: Bound) -> dict[str, Any]:
    """The arguments of a call of `op`, by schema name (defaults left out)."""
    names = [a.name for a in op._schema.arguments]
    return {**dict(zip(names, args, strict=False)), **kwargs}


def op_written_names(op: torch._ops.OpOverload, bound: Bound) -> list[str]:
    """The argument names `op` writes on a call with `bound` arguments: its schema's
    `Tensor(a!)` ones, and those `UNDECLARED` lists when its condition holds (EFF-9)."""
    schema = op._schema.arguments
    names = [a.name for a in schema if a.alias_info is not None and a.alias_info.is_write]
    entry = UNDECLARED.get(op.overloadpacket)
    if entry is not None and entry[1](bound):
        names.extend(entry[0])
    return names


def in_tables(target: object) -> bool:
    """Whether a node of `target` may write by one of the tables."""
    try:
        if isinstance(target, torch._ops.OpOverload):
            return target.overloadpacket in UNDECLARED
        return target in PYTHON_WRITES
    except TypeError:  # an unhashable target
        return False


def table_writes(node: Node) -> tuple[int, ...]:
    """The flat argument positions the tables say `node` writes on this call, increasing."""
    if node.op != "call_function" or not in_tables(node.target):
        return ()
    names, bound = _bound(node)
    if isinstance(node.target, torch._ops.OpOverload):
        written = UNDECLARED[node.target.overloadpacket]
    else:
        written = PYTHON_WRITES[node.target]
    if bound is None or not written[1](bound):
        return ()
    return _positions(node, names, written[0])


def _bound(node: Node) -> tuple[list[str], Bound | None]:
    """The parameter names of `node`'s target and its call's bound arguments (None: they do
    not bind)."""
    target: Any = node.target
    if isinstance(target, torch._ops.OpOverload):
        names = [a.name for a in target._schema.arguments]
        return names, schema_bound(target, node.args, node.kwargs)
    signature = inspect.signature(target)
    try:
        bound = signature.bind(*node.args, **node.kwargs).arguments
    except TypeError:
        return list(signature.parameters), None
    return list(signature.parameters), bound


def _positions(node: Node, names: Sequence[str], written: Sequence[str]) -> tuple[int, ...]:
    """The flat positions of `node`'s arguments bound to the names in `written`."""
    found: list[int] = []
    offset = 0
    for key, arg in [*enumerate(node.args), *node.kwargs.items()]:
        nodes: list[Node] = []
        torch.fx.map_arg(arg, nodes.append)
        name = names[key] if isinstance(key, int) and key < len(names) else key
        if name in written:
            found.extend(range(offset, offset + len(nodes)))
        offset += len(nodes)
    return tuple(found)
