"""T8 `test_mutation_tracking_simple`: in-place ops record the flat position they mutate."""

from __future__ import annotations

import torch

scenario = "T8"
description = "z.sin_() and y0.add_(z): mutation map {sin_: [0], add_: [0]}"
torch_wrong: str | None = None
tracking_only = True


def model(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    x0 = torch.sin(x)
    y0 = torch.cos(y)
    z.sin_()
    y0.add_(z)
    return x0.sum() + y0.sum()


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.rand(10, 10, generator=_g),
    torch.rand(10, 10, generator=_g),
    torch.rand(10, 10, generator=_g),
)
