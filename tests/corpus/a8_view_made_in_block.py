"""Each block makes a view of its input and reads it; the input is updated in place after each
call. The view is a direct user of the updated value and it is inside the region, so torch's
mutation order holds the call before the update: torch is right."""

from __future__ import annotations

import torch

scenario = "A8"
description = "v = h.view(-1) made and read inside blk, h.add_(1) after each call"
torch_wrong: str | None = None
tracking_only = False


def blk(h: torch.Tensor) -> torch.Tensor:
    v = h.view(-1)
    return (v * 2).sin()


def model(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    h1, h2 = x.clone(), x.clone() * 2
    o1 = blk(h1)
    h1.add_(1)
    o2 = blk(h2)
    h2.add_(1)
    return o1, o2, h1, h2


example_inputs = (torch.randn(4, 4, generator=torch.Generator().manual_seed(7)),)
