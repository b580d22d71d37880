"""Own: a helper returning two values (both used outside), called three times from one loop; the
subgraph has two outputs."""

from __future__ import annotations

import torch

scenario = "own"
description = "mean and centred value returned as a pair, three times: 2 outputs per call"
torch_wrong: str | None = None
tracking_only = False


def centre(h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    mean = h.mean(dim=-1, keepdim=True)
    return mean, (h - mean) * 2


def model(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    h = x
    means = []
    for _ in range(3):
        mean, h = centre(h)
        means.append(mean)
    return (h, *means)


example_inputs = (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)),)
