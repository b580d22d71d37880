"""Own: the block updates its input in place as a statement (`h.mul_(2)`, result unused), so the
in-place node has no users and stays outside the region; the mutation dependencies keep it
before the invoke that reads `h`: merged, result correct."""

from __future__ import annotations

import torch

scenario = "own"
description = "h.mul_(2); (h + 1).sum() on three graph inputs: mul_ stays outside, correct"
torch_wrong: str | None = None
tracking_only = False


def block(h: torch.Tensor) -> torch.Tensor:
    h.mul_(2)
    return (h + 1).sum()


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
