"""Own: identical code written on two lines never merges (the key holds the source line)."""

from __future__ import annotations

import torch

scenario = "own"
description = "torch.cos(x * 1.5).sum() on two lines: no group"
torch_wrong: str | None = None
tracking_only = False


def model(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    a = torch.cos(x * 1.5).sum()
    b = torch.cos(x * 1.5).sum()
    return a, b


example_inputs = (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)),)
