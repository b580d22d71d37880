"""A slice of a value is read by repeated blocks, and the value is updated in place after each
read (a slice is a view: the same storage)."""

from __future__ import annotations

import torch

scenario = "A2"
description = "s = h[1:] read by blk twice, h.mul_(2) after each read"
torch_wrong: str | None = "N9"
tracking_only = False


def blk(s: torch.Tensor) -> torch.Tensor:
    return torch.tanh(s * 3) - 1


def model(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = x * 1.0
    s = h[1:]
    o1 = blk(s)
    h.mul_(2)
    o2 = blk(s)
    h.mul_(2)
    return o1, o2


example_inputs = (torch.randn(5, 4, generator=torch.Generator().manual_seed(1)),)
