"""Own: input dtype is in the key (tensor metadata), so the fp64 call does not merge with the
two fp32 calls."""

from __future__ import annotations

import torch

scenario = "own"
description = "cos(sin(h) * 2) + 1 on fp32, fp64, fp32 inputs: the fp32 calls merge"
torch_wrong: str | None = None
tracking_only = False


def block(h: torch.Tensor) -> torch.Tensor:
    return torch.cos(torch.sin(h) * 2) + 1


def model(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for h in (x, y, x):
        outs.append(block(h))
    return tuple(outs)


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.randn(4, 8, generator=_g),
    torch.randn(4, 8, generator=_g, dtype=torch.float64),
)
