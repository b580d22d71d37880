"""B2: the target is not part of torch's key, so `sin(x) * 2` and `cos(x) * 2` from the same
line merge and the cos call runs sin."""

from __future__ import annotations

import torch

scenario = "B2"
description = "for f in (sin, cos, sin): f(x) * 2: the cos call computes sin with dedup"
torch_wrong: str | None = "B2"
tracking_only = False


def model(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for f in (torch.sin, torch.cos, torch.sin):
        outs.append(f(x) * 2)
    return tuple(outs)


example_inputs = (torch.rand(8, 8, generator=torch.Generator().manual_seed(0)),)
