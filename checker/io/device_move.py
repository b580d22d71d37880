"""Moving a model and its example inputs to a device, in torch alone (spec chapter 10, FIL-8,
FIL-16, FIL-17).

A repro of a run with `--device` carries this file's code after the model's source (FIL-16), so
it moves what the run moved, the same way, with nothing but torch; its names begin with
`_fxoracle_` so that they cannot shadow a model file's. What moves (FIL-17): a tensor (keeping
`requires_grad`: a leaf stays a leaf), an `nn.Module` (its parameters and buffers, then every
attribute of its own of each of its modules, private ones included, that holds a tensor or an
object with a `to` method), and any other object with a `to` method (a flex-attention
`BlockMask`, a `BatchEncoding`), through lists, tuples and dicts. A value given twice is moved
once and stays one value (Dynamo captures one tensor as one input).
"""

from collections.abc import Callable
from typing import Any

import torch
from torch.utils._pytree import tree_leaves, tree_map

_FXORACLE_MODULE_OWN = frozenset(vars(torch.nn.Module()))  # torch's bookkeeping: never walked


def _fxoracle_to_device(device: torch.device, model: Any, inputs: tuple[Any, ...]) -> Any:
    """`(model, inputs)` with everything above on `device` (a module in place, as `to` does)."""
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    done: list[tuple[Any, Any]] = []  # (given, moved)

    def move(value: Any) -> Any:
        for given, moved in done:
            if given is value:
                return moved
        if isinstance(value, torch.nn.Module):
            done.append((value, value))  # before its attributes: a module met again is done
            _fxoracle_module_moved(value, device, move)
            return value
        moved = _fxoracle_moved(value, device)
        if moved is not value:
            done.append((value, moved))
        return moved

    return move(model), tuple(tree_map(move, inputs))


def _fxoracle_module_moved(
    module: torch.nn.Module, device: torch.device, move: Callable[[Any], Any]
) -> None:
    """Its parameters and buffers, then each attribute of its modules' own that holds what
    moves (torch's bookkeeping left alone)."""
    module.to(device)
    for each in module.modules():
        for name, held in list(vars(each).items()):
            if name in _FXORACLE_MODULE_OWN:
                continue
            again = tree_map(move, held)
            if any(a is not b for a, b in zip(tree_leaves(held), tree_leaves(again), strict=True)):
                setattr(each, name, again)


def _fxoracle_moved(value: Any, device: torch.device) -> Any:
    """A tensor or an object with a `to` method on `device`; anything else as it is."""
    if isinstance(value, torch.Tensor):
        if value.device == device:
            return value
        return value.detach().to(device).requires_grad_(value.requires_grad)
    if callable(getattr(type(value), "to", None)) and not isinstance(value, type):
        return value.to(device)
    return value
