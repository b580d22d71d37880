"""What torch's `invoke_subgraph` runtime takes, returns and keeps (spec chapter 03, RPL-21,
RPL-23, RPL-24, RPL-28): the values `stricter`'s rules accept as a call's operands and results,
and when a call saves its operands for backward. torch's pass checks none of them; its runtime
fails at the call, or in backward, instead.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.fx
from torch._C._functorch import is_functorch_wrapped_tensor
from torch._subclasses.fake_tensor import FakeTensor

from reference.fx_helpers import example_value
from reference.names import INVOKE
from reference.track.keys import functorch_kind

Node = torch.fx.Node


def runtime_takes(value: object) -> bool:
    """Whether torch's `invoke_subgraph` runtime accepts `value` as an operand: a tensor, an
    int (bools included), a SymInt, a generator, a fake script object, an object of a
    registered opaque type, or None; never a float or a module, nor a tensor subclass with a
    `__torch_dispatch__` the operator has no rule for, such as a nested jagged tensor (RPL-21).
    torch 2.13's call and its `save_values_for_backward` check the same types."""
    from torch._library.fake_class_registry import FakeScriptObject
    from torch._library.opaque_object import is_opaque_type

    if isinstance(value, torch.Tensor):
        return not dispatching_subclass(value)
    accepted = (int, torch.SymInt, torch.Generator, FakeScriptObject)
    return value is None or isinstance(value, accepted) or is_opaque_type(type(value))


def dispatching_subclass(t: torch.Tensor) -> bool:
    """`t` is of a tensor subclass with its own `__torch_dispatch__` (not a fake tensor, which
    stands for a plain one) that torch's `invoke_subgraph` has no rule for."""
    kind = type(t)
    own = kind.__torch_dispatch__ is not torch.Tensor.__torch_dispatch__
    return own and kind is not FakeTensor and kind not in INVOKE.python_key_table


def functorch_wrapped(value: object) -> str:
    """The kind of the first functorch-wrapped tensor in `value` (a tensor, or a tuple or list
    holding tensors), or "": vmap's batched tensor, `torch.func.grad`'s tracking tensor. torch's
    `invoke_subgraph` has no functorch rule (RPL-24)."""
    if isinstance(value, tuple | list):
        return next((k for k in map(functorch_wrapped, value) if k), "")
    if isinstance(value, torch.Tensor) and is_functorch_wrapped_tensor(value):
        return functorch_kind(value)
    return ""


def runtime_returns(value: object) -> bool:
    """Whether torch's `invoke_subgraph` runtime can return `value` from a subgraph: a tensor or
    a SymInt, or a tuple of them (flattened); a plain int or a float it cannot (RPL-23)."""
    if isinstance(value, tuple | list):
        return all(runtime_returns(v) for v in value)
    return isinstance(value, torch.Tensor | torch.SymInt)


def saves_operands(operands: Iterable[Node], grad_enabled: bool) -> bool:
    """Whether a call on `operands` runs through torch's autograd rule, whose autograd function
    saves every tensor operand for backward (RPL-28): grad mode is on and a tensor operand
    requires grad (`HigherOrderOperator.py_autograd_impl`). An operand whose value comes from
    `val` alone (torch.export's, which does not track `requires_grad`) may require grad."""

    def may_require_grad(node: Node) -> bool:
        value = example_value(node)
        tracked = "example_value" in node.meta
        return isinstance(value, torch.Tensor) and (value.requires_grad or not tracked)

    return grad_enabled and any(map(may_require_grad, operands))
