"""Deterministic, readable names for fx targets.

`str(node.target)` contains memory addresses for many callables (`<built-in method sin of type
object at 0x7f...>`), so every key, report and canonical form prints targets through
`qualified_name`, which never does. A constant's text is `constant_text`'s, for keys
(`reference.track.keys.constant_key`) and for the checker's structural keys alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


_SCALAR_TYPES: tuple[type, ...] = (bool, int, float, complex, str, type(None), type(Ellipsis))
_TORCH_ENUMS: tuple[type, ...] = (torch.dtype, torch.device, torch.layout, torch.memory_format)


def constant_text(value: Any) -> tuple[str, str] | None:
    """A constant's type and canonical text (TRK-5): a scalar by `repr` (so `0.0` and `-0.0`
    differ), torch's enums by `str`, a callable other than a module by its dotted qualified
    name; None for anything else (an object without a deterministic text)."""
    if isinstance(value, _SCALAR_TYPES):
        return type(value).__name__, repr(value)
    if isinstance(value, _TORCH_ENUMS):
        return type(value).__name__, str(value)
    if callable(value) and not isinstance(value, torch.nn.Module):
        name = qualified_name(value)
        if "." in name:
            return "callable", name
    return None
