"""D5 `test_input_mutation`: regions whose external inputs are mutated inside are refused
("NYI: Failed to substitute region ... due to mutation"); `y` is a graph input mutated in place."""

from __future__ import annotations

import torch

scenario = "D5"
description = "m mutates its inputs: [sum, sum, add] x2; [x0_1, add_], [y0, add__1] refused"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = x + 1
    y0 = y + 1
    x.add_(x0)
    y.add_(y0)
    return x.sum() + y.sum()


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = torch.sin(x)
    return inner(x0, y) + inner(x0.clone(), y.clone())


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 20, generator=_g))
