"""Own: the block's first node updates its input in place and the rest reads that node, so the
in-place node is inside the region and mutates an external input: every region is refused
("NYI: Failed to substitute region ... due to mutation"); the graph inputs are mutated."""

from __future__ import annotations

import torch

scenario = "own"
description = "h.mul_(2).add(1).sum() on three graph inputs from a loop: all regions refused"
torch_wrong: str | None = None
tracking_only = False


def block(h: torch.Tensor) -> torch.Tensor:
    return h.mul_(2).add(1).sum()


def model(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for h in (x, y, z):
        outs.append(block(h))
    return tuple(outs)


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.randn(4, 8, generator=_g),
    torch.randn(4, 8, generator=_g),
    torch.randn(4, 8, generator=_g),
)
