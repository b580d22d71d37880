"""Deterministic, readable names for fx targets.

`str(node.target)` contains memory addresses for many callables (`<built-in method sin of type
object at 0x7f...>`), so every key, report and canonical form prints targets through
`qualified_name`, which never does.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

_MODULE_ALIASES = {"_operator": "operator", "torch._C._VariableFunctions": "torch"}
INVOKE = torch.ops.higher_order.invoke_subgraph  # the one name of the call the replacer emits


def qualified_name(target: str | Callable[..., object]) -> str:
    """`torch.sin`, `operator.add`, `aten.add.Tensor`, `torch.Tensor.add`, or the string target."""
    if isinstance(target, str):
        return target
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return str(target)
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"torch.ops.higher_order.{target._name}"
    qualname = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    if not isinstance(qualname, str):
        return f"<{type(target).__qualname__}>"
    module = getattr(target, "__module__", None)
    if qualname.startswith("_VariableFunctionsClass."):
        module, qualname = "torch", qualname.removeprefix("_VariableFunctionsClass.")
    elif qualname.startswith("TensorBase.") and module is None:
        module, qualname = "torch", "Tensor." + qualname.removeprefix("TensorBase.")
    if not isinstance(module, str):
        return qualname
    return f"{_MODULE_ALIASES.get(module, module)}.{qualname}"
