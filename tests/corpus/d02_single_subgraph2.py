"""D2 `test_single_subgraph2`: in-place ops on values created inside the region are fine."""

from __future__ import annotations

import torch

scenario = "D2"
description = "k(x): o = x * 7; o += 1; o += 2, twice chained: 1 subgraph, 2 calls"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor) -> torch.Tensor:
    o = x * 7
    o += 1
    o += 2
    return o


def model(x: torch.Tensor) -> torch.Tensor:
    o = inner(x + 2)
    o = inner(torch.cos(o))
    return torch.sin(o)


example_inputs = (torch.rand(10, 10, generator=torch.Generator().manual_seed(0)),)
