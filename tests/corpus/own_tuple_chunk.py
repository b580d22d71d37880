"""Own: a gated block that chunks its input (a tuple-valued node and its getitems inside the
region), applied three times from one loop."""

from __future__ import annotations

import torch

scenario = "own"
description = "a, b = h.chunk(2); cat(a * sigmoid(b), b + 1), three times in a loop"
torch_wrong: str | None = None
tracking_only = False


def gated(h: torch.Tensor) -> torch.Tensor:
    a, b = h.chunk(2, dim=-1)
    return torch.cat((a * torch.sigmoid(b), b + 1), dim=-1)


def model(x: torch.Tensor) -> torch.Tensor:
    h = x
    for _ in range(3):
        h = gated(h)
    return h


example_inputs = (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)),)
