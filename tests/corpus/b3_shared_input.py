"""B3: region 0 is called with the same tensor twice, so torch's subgraph gets one placeholder
and the second call drops `z` (it even vanishes from the graph inputs); the reference's subgraph
has one placeholder per usage class (RPL-2)."""

from __future__ import annotations

import torch

scenario = "B3"
description = "g(a, b) = (a * 2).sum() + (b * 3).sum() on (x, x) then (y, z): wrong with dedup"
torch_wrong: str | None = "B3"
tracking_only = False


def block(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a * 2).sum() + (b * 3).sum()


def model(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for a, b in ((x, x), (y, z)):
        outs.append(block(a, b))
    return tuple(outs)


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.rand(8, 8, generator=_g),
    torch.rand(8, 8, generator=_g),
    torch.rand(8, 8, generator=_g),
)
