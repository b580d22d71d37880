"""Own: a residual MLP block applied four times from one loop (one call site); all four merge."""

from __future__ import annotations

import torch

scenario = "own"
description = "h = h + relu(h @ w1) @ w2, four times in a loop: one group of 4 regions"
torch_wrong: str | None = None
tracking_only = False


def block(h: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return h + torch.relu(h @ w1) @ w2


def model(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    h = x
    for _ in range(4):
        h = block(h, w1, w2)
    return h


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.randn(4, 16, generator=_g),
    torch.randn(16, 32, generator=_g) * 0.1,
    torch.randn(32, 16, generator=_g) * 0.1,
)
