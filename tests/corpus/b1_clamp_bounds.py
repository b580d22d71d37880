"""B1 (clamp bounds): `clamp(., 0., 1.)` and `clamp(., 0., 2.)` share a key; the second call
clamps at 1.0 after deduplication."""

from __future__ import annotations

import torch

scenario = "B1"
description = "clamp(sin(x) * 4, 0., hi).cos() for hi in (1., 2.): wrong result with dedup"
torch_wrong: str | None = "B1"
tracking_only = False


def block(x: torch.Tensor, hi: float) -> torch.Tensor:
    return torch.clamp(torch.sin(x) * 4, 0.0, hi).cos()


def model(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for hi in (1.0, 2.0):
        outs.append(block(x, hi))
    return tuple(outs)


example_inputs = (torch.rand(8, 8, generator=torch.Generator().manual_seed(0)),)
