"""Own: every call passes the same tensor twice ((x, x) then (y, y)), so region 0's single
placeholder is right for every region: merged, result correct (contrast with B3)."""

from __future__ import annotations

import torch

scenario = "own"
description = "g(a, b) = (a * 2).sum() + (b * 3).sum() on (x, x) then (y, y): correct"
torch_wrong: str | None = None
tracking_only = False


def block(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a * 2).sum() + (b * 3).sum()


def model(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for a, b in ((x, x), (y, y)):
        outs.append(block(a, b))
    return tuple(outs)


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(8, 8, generator=_g), torch.rand(8, 8, generator=_g))
