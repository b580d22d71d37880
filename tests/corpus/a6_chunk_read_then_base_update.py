"""A chunk of a value (a view) is read by repeated blocks, and the value is updated in place
after each read."""

from __future__ import annotations

import torch

scenario = "A6"
description = "a = h.chunk(2)[1] read by blk twice, h.add_(1) after each read"
torch_wrong: str | None = "N9"
tracking_only = False


def blk(a: torch.Tensor) -> torch.Tensor:
    return (a * a).exp() - a


def model(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = x * 0.5
    a = h.chunk(2)[1]
    o1 = blk(a)
    h.add_(1)
    o2 = blk(a)
    h.add_(1)
    return o1, o2


example_inputs = (torch.randn(4, 3, generator=torch.Generator().manual_seed(5)),)
