"""Own: a block inlined in a loop body (no helper): loop iterations share source line and
instruction pointer, so they merge."""

from __future__ import annotations

import torch

scenario = "own"
description = "h = torch.cos(h * 1.5).sum(0, keepdim=True) + h in a loop of 4: merged"
torch_wrong: str | None = None
tracking_only = False


def model(x: torch.Tensor) -> torch.Tensor:
    h = x
    for _ in range(4):
        h = torch.cos(h * 1.5).sum(0, keepdim=True) + h
    return h


example_inputs = (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)),)
