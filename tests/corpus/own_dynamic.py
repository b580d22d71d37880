"""Own: `dynamic=True`. Two calls on `x` (sizes s0, s1) merge; the call on `y` (other symbols)
does not: symbolic sizes enter the key as strings."""

from __future__ import annotations

import torch

scenario = "own"
description = "relu(h * 2).sum(0) + 1 on x, y, x with dynamic shapes: the two x calls merge"
torch_wrong: str | None = None
tracking_only = False
dynamic = True


def block(h: torch.Tensor) -> torch.Tensor:
    return torch.relu(h * 2).sum(0) + 1


def model(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for h in (x, y, x):
        outs.append(block(h))
    return tuple(outs)


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randn(4, 8, generator=_g), torch.randn(5, 6, generator=_g))
