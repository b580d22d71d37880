"""A getitem of a tuple that a region of an earlier group outputs lies in the representative
region of a later group (SD3's AdaLayerNormContinuous). `ada` runs on two shapes, so only
`chunk -> shift -> sin` (group 0) and `scale -> exp` (group 1) repeat. Replacing group 0 erases
`scale`; torch still builds group 1's subgraph from it, copying `scale = None[0]` into the body,
which raises `TypeError` when the call runs. The reference's group 1 calls pass the getitems
that took over from `scale` (RPL-17)."""

from __future__ import annotations

import torch

scenario = "A10"
description = "x * scale.exp() + shift.sin() on two shapes: a getitem of group 0's chunk in group 1"
torch_wrong: str | None = "N11"
tracking_only = False


def ada(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    scale, shift = (c * 2).chunk(2, dim=-1)
    return x * scale.exp() + shift.sin()


def model(
    x: torch.Tensor, y: torch.Tensor, c0: torch.Tensor, c1: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return ada(x, c0), ada(y, c1)


_g = torch.Generator().manual_seed(10)
example_inputs = (
    torch.randn(3, 4, generator=_g),
    torch.randn(5, 4, generator=_g),
    torch.randn(1, 8, generator=_g),
    torch.randn(1, 8, generator=_g),
)
