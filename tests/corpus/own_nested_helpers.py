"""Own: helpers calling helpers; the keys use the innermost frame's line, so the nested calls
merge at every level when the outer helper runs in a loop."""

from __future__ import annotations

import torch

scenario = "own"
description = "outer(h) = inner(inner(h) * 2) with inner(h) = sin(h) + 1, three times"
torch_wrong: str | None = None
tracking_only = False


def inner(h: torch.Tensor) -> torch.Tensor:
    return torch.sin(h) + 1


def outer(h: torch.Tensor) -> torch.Tensor:
    return inner(inner(h) * 2).sum(-1, keepdim=True) * h


def model(x: torch.Tensor) -> torch.Tensor:
    h = x
    for _ in range(3):
        h = outer(h)
    return h


example_inputs = (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)) * 0.3,)
