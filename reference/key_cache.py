"""Offline keying's fast path: one graph's keys with every value described once (spec chapter 01,
TRK-13).

`track_graph` keys a graph whose metadata no longer changes, so a node's argument key is the
same for every user of the node: `KeyCache` describes each node's example value once, and each
distinct dense tensor layout (dtype, sizes, strides, device, grad and view flags) once. The keys
are equal to `keys.node_key`'s, value for value; only the work is shared. Live tracking does not
use it: there, an in-place op may still change a value's metadata (`t_()`) after it was read.
This module touches torch objects, so `Any` appears where they cross its edge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import torch
import torch.fx

from reference.keys import (
    ArgKey,
    CallSite,
    Const,
    GlobalState,
    Missing,
    NodeKey,
    TensorMeta,
    call_site_from_stack_trace,
    example_value,
    node_key,
    tensor_meta,
    value_key,
)
from reference.mutation import WRITING_KWARGS, mutated_positions, target_may_write
from reference.names import qualified_name

Node = torch.fx.Node
Target = Any  # an fx node's target: a string, a callable or an op overload (all hashable)
_PLAIN_CONSTANTS = frozenset({int, float, bool, str, type(None)})
RawMeta = tuple[object, ...]  # what a dense, non-symbolic tensor's `TensorMeta` is computed from


class KeyCache:
    """Keys of one graph's nodes, sharing each value's description between its users (TRK-13)."""

    def __init__(self) -> None:
        self._described: dict[Node, ArgKey] = {}
        self._metas: dict[RawMeta, TensorMeta] = {}
        self._names: dict[Target, str] = {}
        self._writers: dict[Target, bool] = {}
        self._sites: dict[str | None, CallSite | None] = {}

    def call_site(self, stack_trace: str | None) -> CallSite | None:
        """`keys.call_site_from_stack_trace(stack_trace)`, parsed once per distinct trace."""
        return _memo(self._sites, stack_trace, call_site_from_stack_trace)

    def node_key(self, node: Node, state: GlobalState, site: CallSite | None) -> NodeKey:
        """`keys.node_key(node, state, site)`, from shared descriptions."""
        return node_key(node, state, site, self.arg_key, self._name(node.target))

    def mutated_positions(self, node: Node) -> tuple[int, ...]:
        """`mutation.mutated_positions(node)`; a target that never writes is asked once."""
        writer = _memo(self._writers, node.target, target_may_write)
        if not writer and WRITING_KWARGS.isdisjoint(node.kwargs):
            return ()
        return mutated_positions(node)

    def arg_key(self, arg: Any) -> ArgKey:
        """`keys.arg_key(arg)`; a node's description is computed on its first use only."""
        if type(arg) in _PLAIN_CONSTANTS:
            return Const(type(arg).__name__, repr(arg))  # `keys.constant_key`'s first case
        if not isinstance(arg, Node):
            return value_key(arg, self.arg_key, self.tensor_meta)
        found = self._described.get(arg)
        if found is None:
            value = example_value(arg)
            found = Missing() if value is None else value_key(value, None, self.tensor_meta)
            self._described[arg] = found
        return found

    def _name(self, target: Target) -> str:
        return _memo(self._names, target, qualified_name)

    def tensor_meta(self, t: torch.Tensor) -> TensorMeta:
        """`keys.tensor_meta(t)`, computed once per distinct dense layout."""
        if t.layout != torch.strided or t._has_symbolic_sizes_strides:
            return tensor_meta(t)
        raw: RawMeta = (t.dtype, t.shape, t.stride(), t.device, t.requires_grad,
                        t.is_quantized, t.is_conj(), t.is_neg(), t.is_inference())  # fmt: skip
        found = self._metas.get(raw)
        if found is None:
            found = self._metas[raw] = tensor_meta(t)
        return found


T = TypeVar("T")


def _memo(memo: dict[Target, T], target: Target, compute: Callable[[Target], T]) -> T:
    """`compute(target)`, remembered in `memo` (an unhashable target is computed every time)."""
    try:
        found = memo.get(target)
    except TypeError:
        return compute(target)
    if found is None:
        found = memo[target] = compute(target)
    return found
