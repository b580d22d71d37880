"""A transpose of a value is read by repeated blocks, and the value is updated in place after
each read."""

from __future__ import annotations

import torch

scenario = "A3"
description = "t = h.t() read by blk twice, h.add_(h) after each read"
torch_wrong: str | None = "N9"
tracking_only = False


def blk(t: torch.Tensor) -> torch.Tensor:
    return (t @ t).relu() * 0.5


def model(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = x + 0
    t = h.t()
    o1 = blk(t)
    h.add_(h)
    o2 = blk(t)
    h.add_(h)
    return o1, o2


example_inputs = (torch.randn(4, 4, generator=torch.Generator().manual_seed(2)),)
