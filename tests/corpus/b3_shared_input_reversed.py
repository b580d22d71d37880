"""B3 reversed: with (y, z) first, region 0 has two placeholders; the (x, x) call is refused
(input-input aliasing) and stays inline, so the result is correct."""

from __future__ import annotations

import torch

scenario = "B3"
description = "g on (y, z) then (x, x): the (x, x) region is refused, result correct"
torch_wrong: str | None = None
tracking_only = False


def block(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a * 2).sum() + (b * 3).sum()


def model(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for a, b in ((y, z), (x, x)):
        outs.append(block(a, b))
    return tuple(outs)


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.rand(8, 8, generator=_g),
    torch.rand(8, 8, generator=_g),
    torch.rand(8, 8, generator=_g),
)
