"""A block that views its result back to its input's shape (`view(h.shape)`) under dynamic shapes:
Dynamo records `size = h.size()` with two unused getitems, so the `size` tuple is both an output
of the region (its getitems are outside) and used whole inside it (by the `view`). From the
random model `random_0_8`. torch's pass erases `size` before the `view` (N1); the reference erases
it with the region (RPL-18)."""

from __future__ import annotations

import torch

scenario = "own"
description = "view(h.shape) in a dynamic block: a tuple output used whole inside its region"
torch_wrong: str | None = "N1"
tracking_only = False
dynamic = True


def block(h: torch.Tensor) -> torch.Tensor:
    t = torch.clamp(h * 1.5, -0.5, 0.5)
    t = t.reshape(-1).view(h.shape)
    return t.sigmoid() + h


def model(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    h0 = block(x)
    h1 = block(h0)
    h2 = block(h0)
    return h0, h1, h2


example_inputs = (torch.randn(6, 8, generator=torch.Generator().manual_seed(0)),)
