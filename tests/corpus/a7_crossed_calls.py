"""Crossed calls (chapter 02's exercise): `a1, b1 = f(x), f(y); a2 = g(a1, b1); b2 = g(b1, a1)`.
The regions grow to `[a1, a2]` and `[b1, b2]`; each is convex alone, but region 0 feeds region 1
(`a1 -> b2`) and region 1 feeds region 0 (`b1 -> a2`): no order can run both calls. torch's sort
fails (`stable topological sort failed`); the reference refuses the group (RPL-25)."""

from __future__ import annotations

import torch

scenario = "A7"
description = "a1, b1 = f(x), f(y); a2 = g(a1, b1); b2 = g(b1, a1): each region feeds the other"
torch_wrong: str | None = "N10"
tracking_only = False


def f(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) * 2


def g(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    return p + q


def model(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a1, b1 = f(x), f(y)
    a2 = g(a1, b1)
    b2 = g(b1, a1)
    return a2, b2


_g = torch.Generator().manual_seed(6)
example_inputs = (torch.randn(4, 4, generator=_g), torch.randn(4, 4, generator=_g))
