"""A view of a value is read by repeated blocks, and the value is updated in place after each
read. The reads are not direct users of the updated node, so torch's mutation order does not hold
them: after outlining both calls run after both updates."""

from __future__ import annotations

import torch

scenario = "A1"
description = "v = h.view(-1) read by blk twice, h.add_(1) after each read"
torch_wrong: str | None = "N9"
tracking_only = False


def blk(v: torch.Tensor) -> torch.Tensor:
    return (v * 2).sin() + 1


def model(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = x.clone()
    v = h.view(-1)
    o1 = blk(v)
    h.add_(1)
    o2 = blk(v)
    h.add_(1)
    return o1, o2


example_inputs = (torch.randn(4, 4, generator=torch.Generator().manual_seed(0)),)
