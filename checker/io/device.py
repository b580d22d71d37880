"""Devices: `--device cpu|cuda|cuda:N` on verify, explain, diff and fuzz (spec chapter 10, FIL-8;
README "Usage").

`device_arg(text)` reads the option: `cpu`, `cuda` or `cuda:N`, where a CUDA device must exist
here (a bad spec or a missing device is bad input, one line). `on_device(model, device)` moves a
model file's model (its parameters, buffers and what its attributes hold, a BlockMask included)
and its example inputs there before capture, with `checker.io.device_move`, whose text a repro
carries (`moving_lines`, FIL-16);
`graph_on_device(graph, device)` accepts a loaded graph only where it already lives (it was
captured there, and fxoracle does not capture it again). `device_of(inputs)` names where the
example inputs live: the default, and what every report names.
"""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import torch
from torch.utils._pytree import tree_leaves

from checker.io import device_move
from checker.io.device_move import _fxoracle_to_device
from checker.io.model_file import Model
from reference.dynamo.capture import Capture
from reference.errors import FxOracleError, describe

NO_TENSOR = "cpu"  # where a model without tensor inputs runs


def device_arg(text: str) -> torch.device:
    """`cpu`, `cuda` or `cuda:N` naming a device this machine has (FIL-8)."""
    if not re.fullmatch(r"cpu|cuda(:[0-9]+)?", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not cpu, cuda or cuda:N")
    device = torch.device(text)
    if device.type == "cpu":
        return device
    if not torch.cuda.is_available():
        build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
        raise argparse.ArgumentTypeError(
            f"{text!r}: no CUDA device here (torch {torch.__version__}, {build})"
        )
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise argparse.ArgumentTypeError(f"{text!r}: this machine has {count} CUDA device(s)")
    return torch.device(
        "cuda", torch.cuda.current_device() if device.index is None else device.index
    )


def on_device(model: Model, device: torch.device | None) -> Model:
    """`model` with its module (parameters, buffers and what its attributes hold) and example
    inputs moved to `device` by `checker.io.device_move` (FIL-17); as it is when `device` is
    None (the inputs' own device). A function model's own tensors (globals, closures) stay
    where the file put them."""
    if device is None:
        return model
    try:
        module, inputs = _fxoracle_to_device(device, model.model, model.example_inputs)
    except Exception as e:  # a fake tensor, a module whose `to` raises: the user's to fix
        raise FxOracleError(f"{model.name}: cannot move it to {device}: {describe(e)}") from e
    return replace(model, model=module, example_inputs=inputs)


def moving_lines(device: torch.device) -> str:
    """What a repro of a run with `--device` runs after the model's source (FIL-16): the
    mover's own text (torch alone) and its call, so the repro moves what the run moved."""
    mover = inspect.getsource(device_move).split('"""', 2)[2].strip()  # after its docstring
    return (
        f"\n\n# fxoracle ran this with --device {device}: the model and its example inputs move "
        f"there as the run moved them\n# (checker/io/device_move.py); it needs that device\n"
        f"{mover}\n\n\nmodel, example_inputs = _fxoracle_to_device("
        f"torch.device({str(device)!r}), model, example_inputs)\n"
    )


def graph_on_device(graph: Capture, device: torch.device | None) -> Capture:
    """A loaded graph, accepted on the device its example inputs live on (or with no device
    asked for); another device is bad input: its nodes were captured for theirs."""
    if device is None or device_of(graph.example_inputs) == str(device):
        return graph
    where = device_of(graph.example_inputs)
    raise FxOracleError(f"--device {device}: this graph was captured on {where}; capture it "
                        f"again on {device}")  # fmt: skip


def device_of(inputs: Sequence[Any]) -> str:
    """Where the example inputs' tensors live (`cpu`, `cuda:0`; several joined by `+`, sorted);
    `cpu` when there is none. A 0-dim CPU tensor beside tensors elsewhere is a scalar that
    torch mixes with any device (Dynamo lifts a module's float attributes so), not a place."""
    tensors = [t for t in tree_leaves(list(inputs)) if isinstance(t, torch.Tensor)]
    placed = [t for t in tensors if t.dim() > 0 or t.device.type != "cpu"]
    found = sorted({str(_full(t.device)) for t in placed or tensors})
    return "+".join(found) if found else NO_TENSOR


def _full(device: torch.device) -> torch.device:
    """`cuda` as `cuda:N` (the current device), so a report names one device one way."""
    if device.type == "cuda" and device.index is None and torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return device
