"""D4 `test_dependent_subgraphs`: the second call consumes the first one's result, so the y
branch (a 10x20 input once, a scalar once) stays outside and the two calls are chained."""

from __future__ import annotations

import torch

scenario = "D4"
description = "inner(x, inner(x, y)): body [x0, sum_1, z], 2 chained calls"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = x + 1
    y0 = y + 2
    z = x0.sum() + y0.sum()
    return z


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    o1 = inner(x, inner(x, y))
    return o1


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.rand(10, 10, generator=_g).requires_grad_(),
    torch.rand(10, 20, generator=_g).requires_grad_(),
)
