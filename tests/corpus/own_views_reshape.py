"""Own: views and reshapes inside a block that starts and ends with computation (no aliasing of
region inputs or outputs), three times from a loop."""

from __future__ import annotations

import torch

scenario = "own"
description = "(h * 2).reshape(8, 4).t().contiguous().view(4, 8).sin(), three times"
torch_wrong: str | None = None
tracking_only = False


def block(h: torch.Tensor) -> torch.Tensor:
    return (h * 2).reshape(8, 4).t().contiguous().view(4, 8).sin()


def model(x: torch.Tensor) -> torch.Tensor:
    h = x
    for _ in range(3):
        h = block(h)
    return h


example_inputs = (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)),)
