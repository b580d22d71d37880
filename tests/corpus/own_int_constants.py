"""Own: ints are in torch's key, so the k=3 call does not merge with the two k=2 calls (which
do); the result stays correct."""

from __future__ import annotations

import torch

scenario = "own"
description = "cos(sin(h) * k) + 1 for k in (2, 3, 2): the two k=2 calls merge"
torch_wrong: str | None = None
tracking_only = False


def block(h: torch.Tensor, k: int) -> torch.Tensor:
    return torch.cos(torch.sin(h) * k) + 1


def model(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for k in (2, 3, 2):
        outs.append(block(x, k))
    return tuple(outs)


example_inputs = (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)),)
